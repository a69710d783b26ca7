/**
 * The `sys/` backend: mounts, auth methods, policies, capabilities, audit devices, the UI's mount
 * lookup, and sealing. (Init, unseal, seal status, generate-root and health are not logical
 * requests; http/sys-raw.ts serves them.)
 */
import { parseDurationSeconds } from '../../common/duration.js';
import { PolicyStore } from '../acl/store.js';
import type { ActiveState } from '../core.js';
import { InvalidRequestError, PermissionDeniedError } from '../errors.js';
import { FrameworkBackend } from '../framework/backend.js';
import type { FieldData, FieldSchemas } from '../framework/fields.js';
import type { Request, Response } from '../logical.js';
import type { MountConfig, MountEntry, MountKind } from '../router.js';
import { VERSION } from '../core.js';

function mountView(entry: MountEntry): Record<string, unknown> {
  return {
    accessor: entry.accessor,
    config: { ...entry.config },
    description: entry.description,
    external_entropy_access: entry.external_entropy_access,
    local: entry.local,
    options: entry.options,
    plugin_version: entry.plugin_version,
    running_plugin_version: `v${VERSION}+builtin.vault`,
    running_sha256: '',
    seal_wrap: entry.seal_wrap,
    type: entry.type,
    uuid: entry.uuid,
  };
}

function parseConfig(raw: Record<string, unknown>): Partial<MountConfig> {
  const out: Partial<MountConfig> = {};
  const ttl = (name: 'default_lease_ttl' | 'max_lease_ttl') => {
    const value = raw[name];
    if (value === undefined || value === '' || value === null) return;
    if (value === 'system') {
      out[name] = 0;
      return;
    }
    try {
      out[name] = parseDurationSeconds(value as string | number);
    } catch {
      throw new InvalidRequestError(`unable to parse ${name} ${JSON.stringify(value)}`);
    }
  };
  ttl('default_lease_ttl');
  ttl('max_lease_ttl');
  if (raw.force_no_cache !== undefined) out.force_no_cache = raw.force_no_cache === true || raw.force_no_cache === 'true';
  if (typeof raw.token_type === 'string') out.token_type = raw.token_type;
  if (typeof raw.listing_visibility === 'string') out.listing_visibility = raw.listing_visibility;
  return out;
}

function stringMap(raw: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

/** A policy body may be sent base64-encoded; Vault decodes it when it decodes cleanly. */
function policyText(text: string): string {
  const compact = text.trim();
  if (compact.length > 0 && compact.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(compact)) {
    const decoded = Buffer.from(compact, 'base64').toString('utf8');
    if (Buffer.from(decoded, 'utf8').toString('base64') === compact) return decoded;
  }
  return text;
}

export function systemBackend(state: ActiveState): FrameworkBackend {
  const mountFields: FieldSchemas = {
    path: { type: 'string' },
    type: { type: 'string' },
    description: { type: 'string' },
    config: { type: 'map' },
    options: { type: 'map' },
    local: { type: 'bool' },
    seal_wrap: { type: 'bool' },
    external_entropy_access: { type: 'bool' },
    plugin_name: { type: 'string' },
    plugin_version: { type: 'string' },
  };
  const tuneFields: FieldSchemas = {
    path: { type: 'string' },
    default_lease_ttl: { type: 'raw' },
    max_lease_ttl: { type: 'raw' },
    description: { type: 'string' },
    listing_visibility: { type: 'string' },
    token_type: { type: 'string' },
  };

  const table = (kind: MountKind): Response => {
    const data: Record<string, unknown> = {};
    for (const entry of state.mountTable(kind)) data[entry.path] = mountView(entry);
    return { data };
  };
  const one = (kind: MountKind, path: string): Response | undefined => {
    const normalised = path.replace(/\/*$/, '/');
    const entry = state.mountTable(kind).find((e) => e.path === normalised);
    return entry ? { data: mountView(entry) } : undefined;
  };
  const enable = (kind: MountKind) => async (_r: Request, f: FieldData): Promise<undefined> => {
    const type = f.string('type') || f.string('plugin_name');
    if (!type) throw new InvalidRequestError('backend type must be specified as a string');
    await state.mount(kind, f.string('path'), {
      type,
      description: f.string('description'),
      config: parseConfig(f.map('config')),
      options: f.has('options') ? stringMap(f.map('options')) : null,
      local: f.bool('local'),
      seal_wrap: f.bool('seal_wrap'),
    });
    return undefined;
  };
  const disable = (kind: MountKind) => async (_r: Request, f: FieldData): Promise<undefined> => {
    await state.unmount(kind, f.string('path'));
    return undefined;
  };
  const tuneRead = (kind: MountKind) => async (_r: Request, f: FieldData): Promise<Response> => {
    const normalised = f.string('path').replace(/^\/+/, '').replace(/\/*$/, '/');
    const entry = state.mountTable(kind).find((e) => e.path === normalised);
    if (!entry) throw new InvalidRequestError(`cannot fetch sysview for path "${normalised}"`);
    return {
      data: {
        default_lease_ttl: entry.config.default_lease_ttl || state.core.defaultLeaseTtl,
        max_lease_ttl: entry.config.max_lease_ttl || state.core.maxLeaseTtl,
        force_no_cache: entry.config.force_no_cache,
        description: entry.description,
        options: entry.options,
        ...(kind === 'auth' ? { token_type: entry.config.token_type ?? 'default-service' } : {}),
      },
    };
  };
  const tuneWrite = (kind: MountKind) => async (_r: Request, f: FieldData): Promise<undefined> => {
    const config = parseConfig({
      default_lease_ttl: f.get('default_lease_ttl'),
      max_lease_ttl: f.get('max_lease_ttl'),
      ...(f.has('token_type') ? { token_type: f.string('token_type') } : {}),
      ...(f.has('listing_visibility') ? { listing_visibility: f.string('listing_visibility') } : {}),
    });
    await state.tune(kind, f.string('path'), config, f.has('description') ? f.string('description') : undefined);
    return undefined;
  };

  const policyList = async (): Promise<string[]> => [...(await state.policies.list()), 'root'];
  const writePolicy = (field: 'policy' | 'rules') => async (_r: Request, f: FieldData): Promise<Response | undefined> => {
    const raw = f.string('name');
    const name = PolicyStore.normalise(raw);
    const warnings: string[] = [];
    if (name !== raw) warnings.push(`policy name was converted to ${name}`);
    let text = f.string('policy');
    if (!text && field === 'rules' && f.string('rules')) {
      text = f.string('rules');
      warnings.push("'rules' is deprecated, please use 'policy' instead");
    }
    if (!text.trim()) throw new InvalidRequestError("'policy' parameter not supplied or empty");
    await state.policies.write(name, policyText(text));
    return warnings.length ? { warnings } : undefined;
  };
  const readPolicy = (field: 'policy' | 'rules') => async (_r: Request, f: FieldData): Promise<Response | undefined> => {
    const name = PolicyStore.normalise(f.string('name'));
    if (name === 'root') return undefined;
    const policy = await state.policies.get(name);
    if (!policy) return undefined;
    return { data: { name: policy.name, [field]: policy.raw } };
  };
  const deletePolicy = async (_r: Request, f: FieldData): Promise<undefined> => {
    await state.policies.delete(f.string('name'));
    return undefined;
  };

  const capabilitiesFields: FieldSchemas = { token: { type: 'string' }, accessor: { type: 'string' }, paths: { type: 'comma-string-slice' }, path: { type: 'comma-string-slice' } };
  const capabilities = (source: 'token' | 'self' | 'accessor') => async (request: Request, f: FieldData): Promise<Response> => {
    const paths = [...f.strings('paths'), ...f.strings('path')];
    if (paths.length === 0) throw new InvalidRequestError('paths must be supplied');
    let policies: readonly string[];
    if (source === 'self') {
      policies = request.caller?.policies ?? [];
    } else if (source === 'accessor') {
      const accessor = f.string('accessor');
      if (!accessor) throw new InvalidRequestError('missing accessor');
      const entry = await state.tokenStore.byAccessor(accessor);
      if (!entry) throw new InvalidRequestError('invalid accessor');
      policies = entry.policies;
    } else {
      const token = f.string('token');
      if (!token) throw new InvalidRequestError('missing token');
      const entry = await state.tokenStore.lookup(token);
      if (!entry) throw new InvalidRequestError('invalid token');
      policies = entry.policies;
    }
    const acl = await state.policies.acl(policies);
    const data: Record<string, unknown> = {};
    for (const path of paths) data[path] = acl.capabilities(path.replace(/^\/+/, ''));
    if (paths.length === 1) data.capabilities = data[paths[0]!];
    return { data };
  };

  const uiMount = async (request: Request, f: FieldData): Promise<Response> => {
    const path = f.string('path').replace(/^\/+/, '');
    const route = state.core.router.match(path);
    if (!route || route.info.kind === 'system') throw new InvalidRequestError(`no mount found for path "${path}"`);
    const acl = await state.policies.acl(request.caller?.policies ?? []);
    const visible = acl.root || [path, route.prefix, `${route.prefix}*`].some((p) => acl.capabilities(p)[0] !== 'deny') || acl.hasRuleUnder(route.prefix);
    if (!visible) throw new PermissionDeniedError('acl');
    return { data: { ...mountView(route.entry), path: route.kind === 'auth' ? route.entry.path : route.prefix } };
  };

  return new FrameworkBackend({
    help: 'The system backend is built in and controls mounts, policies, capabilities, audit devices and the seal.',
    paths: [
      { pattern: 'mounts/?', operations: { read: async () => table('secret') } },
      { pattern: 'mounts/(?<path>.+?)/tune', fields: tuneFields, operations: { read: tuneRead('secret'), update: tuneWrite('secret') } },
      {
        pattern: 'mounts/(?<path>.+)',
        fields: mountFields,
        operations: { read: async (_r, f) => one('secret', f.string('path')), update: enable('secret'), delete: disable('secret') },
      },
      { pattern: 'auth/?', operations: { read: async () => table('auth') } },
      { pattern: 'auth/(?<path>.+?)/tune', fields: tuneFields, operations: { read: tuneRead('auth'), update: tuneWrite('auth') } },
      {
        pattern: 'auth/(?<path>.+)',
        fields: mountFields,
        sudo: true,
        operations: { read: async (_r, f) => one('auth', f.string('path')), update: enable('auth'), delete: disable('auth') },
      },
      {
        pattern: 'policy/?',
        operations: {
          read: async () => {
            const keys = await policyList();
            return { data: { keys, policies: keys } };
          },
          list: async () => {
            const keys = await policyList();
            return { data: { keys, policies: keys } };
          },
        },
      },
      {
        pattern: 'policy/(?<name>.+)',
        fields: { name: { type: 'string' }, policy: { type: 'string' }, rules: { type: 'string' } },
        operations: { read: readPolicy('rules'), update: writePolicy('rules'), delete: deletePolicy },
      },
      { pattern: 'policies/acl/?', operations: { list: async () => ({ data: { keys: await policyList() } }) } },
      {
        pattern: 'policies/acl/(?<name>.+)',
        fields: { name: { type: 'string' }, policy: { type: 'string' } },
        operations: { read: readPolicy('policy'), update: writePolicy('policy'), delete: deletePolicy },
      },
      { pattern: 'capabilities', fields: capabilitiesFields, operations: { update: capabilities('token') } },
      { pattern: 'capabilities-self', fields: capabilitiesFields, operations: { update: capabilities('self') } },
      { pattern: 'capabilities-accessor', fields: capabilitiesFields, operations: { update: capabilities('accessor') } },
      {
        pattern: 'audit/?',
        sudo: true,
        operations: {
          read: async () => {
            const data: Record<string, unknown> = {};
            for (const device of state.audit.list()) data[device.path] = { ...device };
            return { data };
          },
        },
      },
      {
        pattern: 'audit/(?<path>.+)',
        sudo: true,
        fields: { path: { type: 'string' }, type: { type: 'string' }, description: { type: 'string' }, options: { type: 'kv-pairs' }, local: { type: 'bool' } },
        operations: {
          update: async (_r, f) => {
            const path = f.string('path').replace(/\/*$/, '/');
            await state.enableAudit({ path, type: f.string('type'), description: f.string('description'), options: f.pairs('options'), local: f.bool('local') });
            return undefined;
          },
          delete: async (_r, f) => {
            await state.disableAudit(f.string('path').replace(/\/*$/, '/'));
            return undefined;
          },
        },
      },
      {
        pattern: 'audit-hash/(?<path>.+)',
        fields: { path: { type: 'string' }, input: { type: 'string' } },
        operations: {
          update: async (_r, f) => {
            if (!state.audit.list().some((d) => d.path === f.string('path').replace(/\/*$/, '/'))) throw new InvalidRequestError('unknown audit backend');
            return { data: { hash: state.audit.hash(f.string('input')) } };
          },
        },
      },
      {
        pattern: 'internal/ui/mounts',
        operations: {
          read: async () => {
            const secret: Record<string, unknown> = {};
            const auth: Record<string, unknown> = {};
            for (const entry of state.mountTable('secret')) if (entry.type !== 'system') secret[entry.path] = mountView(entry);
            for (const entry of state.mountTable('auth')) auth[entry.path] = mountView(entry);
            return { data: { secret, auth } };
          },
        },
      },
      { pattern: 'internal/ui/mounts/(?<path>.+)', fields: { path: { type: 'string' } }, operations: { read: uiMount } },
      {
        pattern: 'rotate',
        sudo: true,
        operations: {
          update: async () => {
            await state.core.barrier.rotate();
            return undefined;
          },
        },
        synopsis: 'Add a new encryption key to the barrier keyring and make it active.',
      },
      {
        pattern: 'key-status',
        operations: {
          read: async () => {
            const status = state.core.barrier.keyStatus();
            return { data: { term: status.term, install_time: status.installed } };
          },
        },
      },
      {
        pattern: 'seal',
        sudo: true,
        operations: {
          update: async () => {
            await state.core.seal();
            return undefined;
          },
        },
      },
      {
        pattern: '(leases/(lookup|renew|revoke)|renew|revoke)(/.*)?',
        fields: { lease_id: { type: 'string' }, increment: { type: 'duration' } },
        operations: {
          update: async (_r, f) => {
            if (!f.string('lease_id')) throw new InvalidRequestError('missing lease id');
            throw new InvalidRequestError('invalid lease');
          },
        },
      },
    ],
  });
}


/**
 * The AppRole auth method (vault.md §5): machines log in with a role ID (stable, not secret) and a
 * secret ID (issued per client, optionally limited in uses, lifetime and source addresses).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { InvalidRequestError, NotFoundError, PermissionDeniedError } from '../../errors.js';
import { FrameworkBackend, type PathDef } from '../../framework/backend.js';
import type { FieldData } from '../../framework/fields.js';
import type { Auth, RenewRequest, Request, Response } from '../../logical.js';
import type { BackendContext, BackendRegistration } from '../../registry.js';
import { getJSON, putJSON, type StorageView } from '../../storage-view.js';
import { addressAllowed, parseCidrList } from '../shared/cidr.js';
import { LoginLockout } from '../shared/lockout.js';
import { equivalentPolicies, tokenAuth } from '../shared/token-params.js';
import { applyRoleWrite, newRole, ROLE_NAME, ROLE_PROPERTIES, roleData, roleFieldSchemas, validateRole, type RoleEntry } from './roles.js';
import { SecretIdConflictError, SecretIdStore, type SecretIdEntry } from './secret-ids.js';

const INVALID_CREDENTIALS = 'invalid role or secret ID';
const HMAC_KEY = 'hmac_key';

const roleKey = (name: string) => `role/${name.toLowerCase()}`;

export function approleBackend(context: BackendContext): FrameworkBackend {
  const lockout = new LoginLockout();
  let hmacKey: Promise<Buffer> | undefined;
  /** The mount's HMAC key: made once, kept in the mount's storage (under the barrier). */
  const mountKey = () =>
    (hmacKey ??= (async () => {
      const stored = await context.storage.get(HMAC_KEY);
      if (stored) return Buffer.from(stored);
      const key = randomBytes(32);
      await context.storage.put(HMAC_KEY, key);
      return key;
    })().catch((error) => {
      hmacKey = undefined;
      throw error;
    }));
  const secretIds = new SecretIdStore(mountKey);
  const roleIdKey = async (roleId: string) => `role_id/${await secretIds.hmac(`role_id:${roleId}`)}`;

  const readRole = (storage: StorageView, name: string) => getJSON<RoleEntry>(storage, roleKey(name));
  const requireRole = async (storage: StorageView, name: string): Promise<RoleEntry> => {
    const role = await readRole(storage, name);
    if (!role) throw new NotFoundError(`role ${JSON.stringify(name)} does not exist`);
    return role;
  };
  const saveRole = async (storage: StorageView, role: RoleEntry, previous?: RoleEntry) => {
    if (previous && previous.roleId !== role.roleId) await storage.delete(await roleIdKey(previous.roleId));
    await putJSON(storage, await roleIdKey(role.roleId), { name: role.name });
    await putJSON(storage, roleKey(role.name), role);
  };
  const assertRoleIdFree = async (storage: StorageView, roleId: string, name: string) => {
    const owner = await getJSON<{ name: string }>(storage, await roleIdKey(roleId));
    if (owner && owner.name !== name) throw new InvalidRequestError('role_id already in use');
  };

  const roleFields = roleFieldSchemas();
  const secretIdFields = {
    role_name: roleFields.role_name!,
    secret_id: { type: 'string', description: 'The secret ID (custom-secret-id, lookup, destroy).' },
    metadata: { type: 'raw', description: 'A JSON object of strings (or its JSON text) attached to the tokens issued.' },
    cidr_list: { type: 'comma-string-slice', description: 'CIDRs this secret ID may be used from.' },
    token_bound_cidrs: { type: 'comma-string-slice', description: 'CIDRs the tokens issued with it may be used from.' },
    num_uses: { type: 'int', description: 'Logins before the secret ID is spent (0: the role default).' },
    ttl: { type: 'duration', description: 'Lifetime of the secret ID (0: the role default).' },
  } as const;

  async function issueSecretId(request: Request, fields: FieldData, custom: boolean): Promise<Response> {
    const role = await requireRole(request.storage, fields.string('role_name'));
    if (!role.bindSecretId) throw new InvalidRequestError('bind_secret_id is not set on the role');
    let secretId: string | undefined;
    if (custom) {
      secretId = fields.string('secret_id');
      if (secretId === '') throw new InvalidRequestError('missing secret_id');
    }
    const cidrList = parseCidrList(fields.strings('cidr_list'), 'cidr_list');
    assertWithin(cidrList, role.secretIdBoundCidrs, 'cidr_list');
    const tokenBoundCidrs = parseCidrList(fields.strings('token_bound_cidrs'), 'token_bound_cidrs');
    assertWithin(tokenBoundCidrs, role.token.boundCidrs, 'token_bound_cidrs');

    let numUses = fields.int('num_uses');
    if (numUses < 0) throw new InvalidRequestError('num_uses cannot be negative');
    if (role.secretIdNumUses > 0 && numUses > role.secretIdNumUses) throw new InvalidRequestError("num_uses cannot be higher than the role's secret_id_num_uses");
    if (numUses === 0) numUses = role.secretIdNumUses;

    let ttl = fields.duration('ttl');
    if (role.secretIdTtl > 0 && ttl > role.secretIdTtl) throw new InvalidRequestError("ttl cannot be longer than the role's secret_id_ttl");
    if (ttl === 0) ttl = role.secretIdTtl;
    const maxTtl = context.system.maxLeaseTtl();
    if (maxTtl > 0 && ttl > maxTtl) ttl = maxTtl;

    try {
      const { secretId: issued, entry } = await secretIds.create(request.storage, role.name, {
        secretId,
        numUses,
        ttl,
        metadata: parseMetadata(fields.get('metadata')),
        cidrList,
        tokenBoundCidrs,
      });
      return {
        data: {
          secret_id: issued,
          secret_id_accessor: entry.secretIdAccessor,
          secret_id_num_uses: entry.secretIdNumUses,
          secret_id_ttl: entry.secretIdTtl,
        },
      };
    } catch (error) {
      if (error instanceof SecretIdConflictError) throw new InvalidRequestError(error.message);
      throw error;
    }
  }

  const paths: PathDef[] = [
    {
      pattern: 'role/?',
      operations: {
        list: async (request) => {
          const keys = await request.storage.list('role/');
          if (keys.length === 0) throw new NotFoundError();
          return { data: { keys } };
        },
      },
      synopsis: 'List the roles.',
    },
    {
      pattern: `role/${ROLE_NAME}`,
      fields: roleFields,
      existenceCheck: async (request, fields) => (await readRole(request.storage, fields.string('role_name'))) !== undefined,
      operations: {
        read: async (request, fields) => {
          const role = await readRole(request.storage, fields.string('role_name'));
          if (!role) throw new NotFoundError();
          return { data: roleData(role) };
        },
        create: (request, fields) => writeRole(request, fields),
        update: (request, fields) => writeRole(request, fields),
        delete: async (request, fields) => {
          const role = await readRole(request.storage, fields.string('role_name'));
          if (!role) return undefined;
          await secretIds.destroyAll(request.storage, role.name);
          await request.storage.delete(await roleIdKey(role.roleId));
          await request.storage.delete(roleKey(role.name));
          return undefined;
        },
      },
      synopsis: 'Manage a role: its secret-ID constraints and the parameters of the tokens it issues.',
    },
    {
      pattern: `role/${ROLE_NAME}/role-id`,
      fields: { role_name: roleFields.role_name!, role_id: roleFields.role_id! },
      operations: {
        read: async (request, fields) => {
          const role = await readRole(request.storage, fields.string('role_name'));
          if (!role) throw new NotFoundError();
          return { data: { role_id: role.roleId } };
        },
        update: async (request, fields) => {
          const role = await requireRole(request.storage, fields.string('role_name'));
          const roleId = fields.string('role_id');
          if (roleId === '') throw new InvalidRequestError('missing role_id');
          await assertRoleIdFree(request.storage, roleId, role.name);
          await saveRole(request.storage, { ...role, roleId }, role);
          return undefined;
        },
      },
      synopsis: "Read or set the role's role ID.",
    },
    {
      pattern: `role/${ROLE_NAME}/secret-id/?`,
      fields: secretIdFields,
      operations: {
        update: (request, fields) => issueSecretId(request, fields, false),
        list: async (request, fields) => {
          const role = await requireRole(request.storage, fields.string('role_name'));
          const keys = await secretIds.accessors(request.storage, role.name);
          if (keys.length === 0) throw new NotFoundError();
          return { data: { keys } };
        },
      },
      synopsis: 'Issue a new secret ID, or list the accessors of the live ones.',
    },
    {
      pattern: `role/${ROLE_NAME}/custom-secret-id`,
      fields: secretIdFields,
      operations: { update: (request, fields) => issueSecretId(request, fields, true) },
      synopsis: 'Register a secret ID chosen by the caller.',
    },
    {
      pattern: `role/${ROLE_NAME}/secret-id/lookup`,
      fields: { role_name: roleFields.role_name!, secret_id: secretIdFields.secret_id },
      operations: {
        update: async (request, fields) => {
          const role = await requireRole(request.storage, fields.string('role_name'));
          const entry = await secretIds.lookup(request.storage, role.name, requireField(fields, 'secret_id'));
          return entry ? { data: secretIdData(entry) } : undefined;
        },
      },
      synopsis: 'Read the properties of a secret ID.',
    },
    {
      pattern: `role/${ROLE_NAME}/secret-id/destroy`,
      fields: { role_name: roleFields.role_name!, secret_id: secretIdFields.secret_id },
      operations: {
        update: (request, fields) => destroySecretId(request, fields),
        delete: (request, fields) => destroySecretId(request, fields),
      },
      synopsis: 'Destroy a secret ID.',
    },
    {
      pattern: `role/${ROLE_NAME}/secret-id-accessor/lookup`,
      fields: { role_name: roleFields.role_name!, secret_id_accessor: { type: 'string' } },
      operations: {
        update: async (request, fields) => {
          const role = await requireRole(request.storage, fields.string('role_name'));
          const accessor = requireField(fields, 'secret_id_accessor');
          const entry = await secretIds.lookupByAccessor(request.storage, role.name, accessor);
          if (!entry) throw new NotFoundError(`failed to find accessor entry for secret_id_accessor: ${JSON.stringify(accessor)}`);
          return { data: secretIdData(entry) };
        },
      },
      synopsis: 'Read the properties of a secret ID by its accessor.',
    },
    {
      pattern: `role/${ROLE_NAME}/secret-id-accessor/destroy`,
      fields: { role_name: roleFields.role_name!, secret_id_accessor: { type: 'string' } },
      operations: {
        update: (request, fields) => destroyByAccessor(request, fields),
        delete: (request, fields) => destroyByAccessor(request, fields),
      },
      synopsis: 'Destroy a secret ID by its accessor.',
    },
    ...ROLE_PROPERTIES.map(
      (property): PathDef => ({
        pattern: `role/${ROLE_NAME}/${property.segment}`,
        fields: { role_name: roleFields.role_name!, ...property.fields },
        operations: {
          read: async (request, fields) => {
            const role = await readRole(request.storage, fields.string('role_name'));
            if (!role) throw new NotFoundError();
            return { data: property.read(role) };
          },
          ...(property.readOnly
            ? {}
            : {
                update: async (request: Request, fields: FieldData) => {
                  const role = await requireRole(request.storage, fields.string('role_name'));
                  if (!fields.has(property.field)) throw new InvalidRequestError(`missing ${property.field}`);
                  return updateProperty(request.storage, role, property.apply(role, fields));
                },
                delete: async (request: Request, fields: FieldData) => {
                  const role = await requireRole(request.storage, fields.string('role_name'));
                  return updateProperty(request.storage, role, property.apply(role, undefined));
                },
              }),
        },
        synopsis: `Read, set or reset the role's ${property.field}.`,
      }),
    ),
    {
      pattern: 'tidy/secret-id',
      operations: {
        update: async (request) => {
          const result = await secretIds.tidy(request.storage);
          context.logger.info({ mount: context.mount.path, ...result }, 'approle: tidied secret IDs');
          return {
            statusCode: 202,
            warnings: ['Tidy operation successfully started. Any information from the operation will be printed to Vault\'s server logs.'],
          };
        },
      },
      synopsis: 'Delete expired secret IDs and dangling accessors.',
    },
    {
      pattern: 'login',
      unauthenticated: true,
      fields: { role_id: { type: 'string' }, secret_id: { type: 'string' } },
      operations: { update: login },
      synopsis: 'Log in with a role ID and a secret ID.',
    },
  ];

  async function updateProperty(storage: StorageView, previous: RoleEntry, next: RoleEntry): Promise<undefined> {
    validateRole(next, context.system.maxLeaseTtl());
    await saveRole(storage, next, previous);
    return undefined;
  }

  async function writeRole(request: Request, fields: FieldData): Promise<Response | undefined> {
    const name = fields.string('role_name');
    const existing = await readRole(request.storage, name);
    let role = existing ?? newRole(name, randomUUID());
    const requestedRoleId = fields.string('role_id');
    if (requestedRoleId !== '') {
      await assertRoleIdFree(request.storage, requestedRoleId, name);
      role = { ...role, roleId: requestedRoleId };
    }
    const next = applyRoleWrite(role, fields, existing === undefined, context.system.maxLeaseTtl());
    await saveRole(request.storage, next, existing);
    const warnings: string[] = [];
    for (const policy of next.token.policies) {
      if (!(await context.system.policyExists(policy.toLowerCase()))) warnings.push(`Policy ${JSON.stringify(policy)} does not exist`);
    }
    return warnings.length ? { warnings } : undefined;
  }

  async function destroySecretId(request: Request, fields: FieldData): Promise<undefined> {
    const role = await requireRole(request.storage, fields.string('role_name'));
    await secretIds.destroy(request.storage, role.name, requireField(fields, 'secret_id'));
    return undefined;
  }

  async function destroyByAccessor(request: Request, fields: FieldData): Promise<undefined> {
    const role = await requireRole(request.storage, fields.string('role_name'));
    const accessor = requireField(fields, 'secret_id_accessor');
    if (!(await secretIds.destroyByAccessor(request.storage, role.name, accessor))) {
      throw new NotFoundError(`failed to find accessor entry for secret_id_accessor: ${JSON.stringify(accessor)}`);
    }
    return undefined;
  }

  async function login(request: Request, fields: FieldData): Promise<Response> {
    const roleId = fields.string('role_id');
    if (roleId === '') throw new InvalidRequestError('missing role_id');
    lockout.assertNotLocked(roleId);
    const refuse = (): never => {
      lockout.failed(roleId);
      throw new InvalidRequestError(INVALID_CREDENTIALS);
    };
    const index = await getJSON<{ name: string }>(request.storage, await roleIdKey(roleId));
    const role = index ? await readRole(request.storage, index.name) : undefined;
    if (!role || role.roleId !== roleId) return refuse();

    let secretIdEntry: SecretIdEntry | undefined;
    if (role.bindSecretId) {
      const secretId = fields.string('secret_id');
      if (secretId === '') throw new InvalidRequestError('missing secret_id');
      secretIdEntry = await secretIds.consume(request.storage, role.name, secretId, (entry) => {
        if (!addressAllowed(request.remoteAddress, entry.cidrList) || !addressAllowed(request.remoteAddress, role.secretIdBoundCidrs)) {
          throw new InvalidRequestError(`source address ${JSON.stringify(request.remoteAddress)} unauthorized through CIDR restrictions on the secret ID`);
        }
      });
      if (!secretIdEntry) return refuse();
    } else if (!addressAllowed(request.remoteAddress, role.secretIdBoundCidrs)) {
      throw new InvalidRequestError(`source address ${JSON.stringify(request.remoteAddress)} unauthorized by CIDR restrictions on the role`);
    }
    lockout.succeeded(roleId);

    const token = tokenAuth(role.token);
    const boundCidrs = secretIdEntry?.tokenBoundCidrs.length ? secretIdEntry.tokenBoundCidrs : role.token.boundCidrs;
    if (!addressAllowed(request.remoteAddress, boundCidrs)) throw new PermissionDeniedError('token');
    const metadata = { ...(secretIdEntry?.metadata ?? {}), role_name: role.name };
    const auth: Auth = {
      ...token,
      boundCidrs,
      displayName: '',
      metadata,
      internalData: { role_name: role.name },
      alias: { name: role.roleId, metadata },
    };
    return { auth };
  }

  async function renew(request: RenewRequest): Promise<Auth> {
    const name = String(request.auth.internalData?.role_name ?? '');
    const role = await readRole(request.storage, name);
    if (!role) throw new InvalidRequestError(`role ${JSON.stringify(name)} does not exist during renewal`);
    if (!equivalentPolicies(role.token.policies, request.auth.policies)) throw new InvalidRequestError('policies have changed, not renewing');
    return { ...request.auth, ttl: role.token.ttl, maxTtl: role.token.maxTtl, period: role.token.period };
  }

  return new FrameworkBackend({
    paths,
    renew,
    help: 'The AppRole auth method: machines log in with a role ID and a secret ID issued for the role.',
  });
}

export const approleRegistration: BackendRegistration = {
  type: 'approle',
  factory: approleBackend,
  description: 'AppRole credentials for machines and applications',
};

function requireField(fields: FieldData, name: string): string {
  const value = fields.string(name);
  if (value === '') throw new InvalidRequestError(`missing ${name}`);
  return value;
}

/** `metadata` arrives as the JSON text of a string map (node-vault, the CLI) or as an object. */
function parseMetadata(raw: unknown): Record<string, string> {
  if (raw === undefined || raw === null || raw === '') return {};
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (error) {
      throw new InvalidRequestError(`failed to parse metadata: ${(error as Error).message}`);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidRequestError('failed to parse metadata: expected a JSON object of strings');
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new InvalidRequestError(`failed to parse metadata: value of ${JSON.stringify(k)} is not a string`);
    out[k] = v;
  }
  return out;
}

/** Each CIDR of `blocks` must lie inside one of `bounds` (when the role sets bounds). */
function assertWithin(blocks: readonly string[], bounds: readonly string[], field: string): void {
  if (bounds.length === 0) return;
  const contains = (bound: string, block: string) => {
    const [bNetwork, bBits] = bound.split('/') as [string, string];
    const [network, bits] = block.split('/') as [string, string];
    const family = isIP(network) === 6 ? 'ipv6' : 'ipv4';
    if ((isIP(bNetwork) === 6 ? 'ipv6' : 'ipv4') !== family || Number(bBits) > Number(bits)) return false;
    const list = new BlockList();
    list.addSubnet(bNetwork, Number(bBits), family);
    return list.check(network, family);
  };
  for (const block of blocks) {
    if (!bounds.some((bound) => contains(bound, block))) {
      throw new InvalidRequestError(`failed to verify the CIDR restrictions set on the secret ID: ${JSON.stringify(block)} in ${field} is not within the role's bounds`);
    }
  }
}

function secretIdData(entry: SecretIdEntry): Record<string, unknown> {
  return {
    cidr_list: entry.cidrList,
    creation_time: entry.creationTime,
    expiration_time: entry.expirationTime,
    last_updated_time: entry.lastUpdatedTime,
    metadata: entry.metadata,
    secret_id_accessor: entry.secretIdAccessor,
    secret_id_num_uses: entry.secretIdNumUses,
    secret_id_ttl: entry.secretIdTtl,
    token_bound_cidrs: entry.tokenBoundCidrs,
  };
}

/**
 * KV version 2: versioned secrets. `data/<path>` holds versions, `metadata/<path>` the key's
 * metadata, `delete|undelete|destroy/<path>` act on versions, `config` holds mount defaults.
 *
 * Storage: `config`; `metadata/<path>` (per-key metadata, listable by path);
 * `versions/<sha256(path)>/<n>` (the data of each version).
 */
import { createHash } from 'node:crypto';
import { formatDurationSeconds } from '../../common/duration.js';
import { InvalidRequestError, WarningNotFoundError as RawNotFound } from '../errors.js';
import { FrameworkBackend, type PathDef } from '../framework/backend.js';
import type { FieldData, FieldSchemas } from '../framework/fields.js';
import type { Request, Response } from '../logical.js';
import type { BackendContext } from '../registry.js';
import { getJSON, putJSON } from '../storage-view.js';

interface VersionInfo {
  created_time: string;
  deletion_time: string;
  destroyed: boolean;
}

interface KeyMetadata {
  key: string;
  versions: Record<string, VersionInfo>;
  current_version: number;
  oldest_version: number;
  max_versions: number;
  cas_required: boolean;
  delete_version_after: number;
  created_time: string;
  updated_time: string;
  custom_metadata: Record<string, string> | null;
}

interface MountConfig {
  max_versions: number;
  cas_required: boolean;
  delete_version_after: number;
}

const DEFAULT_MAX_VERSIONS = 10;

function nowString(): string {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}

const INVALID_PATH = (verb: string) =>
  `Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv ${verb}' for this operation.`;

const VERB: Record<string, string> = { create: 'put', update: 'put', read: 'get', list: 'list', delete: 'delete', patch: 'patch' };

/** Serialises the read-modify-write of one key's metadata within this process. */
class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}

export function kvV2(context: BackendContext): FrameworkBackend {
  const storage = context.storage;
  const lock = new KeyedLock();
  const versionKey = (path: string, version: number) => `versions/${createHash('sha256').update(path).digest('hex')}/${version}`;

  const config = async (): Promise<MountConfig> =>
    (await getJSON<MountConfig>(storage, 'config')) ?? { max_versions: 0, cas_required: false, delete_version_after: 0 };
  const metadata = (path: string) => getJSON<KeyMetadata>(storage, `metadata/${path}`);

  function isDeleted(info: VersionInfo): boolean {
    return info.deletion_time !== '' && Date.parse(info.deletion_time) <= Date.now();
  }

  function versionMetadata(meta: KeyMetadata, version: number): Record<string, unknown> {
    const info = meta.versions[String(version)]!;
    return { version, created_time: info.created_time, deletion_time: info.deletion_time, destroyed: info.destroyed, custom_metadata: meta.custom_metadata };
  }

  function requirePath(path: string): string {
    if (path === '' || path === '/') throw new RawNotFound('Non-listing operations on the root of a K/V v2 mount are not supported.');
    return path;
  }

  function writeVersion(path: string, data: unknown, options: Record<string, unknown>): Promise<Response> {
    return lock.run(path, () => writeVersionLocked(path, data, options));
  }

  async function writeVersionLocked(path: string, data: unknown, options: Record<string, unknown>): Promise<Response> {
    if (data === undefined || data === null) throw new InvalidRequestError('no data provided');
    if (typeof data !== 'object' || Array.isArray(data)) throw new InvalidRequestError('error parsing the data: expected an object');
    const cfg = await config();
    const now = nowString();
    const meta: KeyMetadata = (await metadata(path)) ?? {
      key: path,
      versions: {},
      current_version: 0,
      oldest_version: 0,
      max_versions: 0,
      cas_required: false,
      delete_version_after: 0,
      created_time: now,
      updated_time: now,
      custom_metadata: null,
    };
    const cas = options.cas;
    if (cas !== undefined) {
      const n = typeof cas === 'number' ? cas : typeof cas === 'string' && /^\d+$/.test(cas) ? Number(cas) : NaN;
      if (!Number.isInteger(n)) throw new InvalidRequestError('error parsing check-and-set parameter');
      if (n !== meta.current_version) throw new InvalidRequestError('check-and-set parameter did not match the current version');
    } else if (cfg.cas_required || meta.cas_required) {
      throw new InvalidRequestError('check-and-set parameter required for this call');
    }
    const version = meta.current_version + 1;
    const deleteAfter = meta.delete_version_after || cfg.delete_version_after;
    meta.versions[String(version)] = {
      created_time: now,
      deletion_time: deleteAfter > 0 ? new Date(Date.now() + deleteAfter * 1000).toISOString() : '',
      destroyed: false,
    };
    meta.current_version = version;
    if (meta.oldest_version === 0) meta.oldest_version = version;
    meta.updated_time = now;
    await storage.put(versionKey(path, version), Buffer.from(JSON.stringify(data)));
    await prune(path, meta, cfg);
    await putJSON(storage, `metadata/${path}`, meta);
    return { data: versionMetadata(meta, version) };
  }

  async function prune(path: string, meta: KeyMetadata, cfg: MountConfig): Promise<void> {
    const max = meta.max_versions || cfg.max_versions || DEFAULT_MAX_VERSIONS;
    const versions = Object.keys(meta.versions).map(Number).sort((a, b) => a - b);
    while (versions.length > max) {
      const oldest = versions.shift()!;
      delete meta.versions[String(oldest)];
      await storage.delete(versionKey(path, oldest));
    }
    meta.oldest_version = versions[0] ?? 0;
  }

  async function readVersion(path: string, version: number): Promise<Response | undefined> {
    const meta = await metadata(path);
    if (!meta) return undefined;
    const n = version === 0 ? meta.current_version : version;
    const info = meta.versions[String(n)];
    if (!info) return undefined;
    if (info.destroyed || isDeleted(info)) return { statusCode: 404, data: { data: null, metadata: versionMetadata(meta, n) } };
    const data = await getJSON<Record<string, unknown>>(storage, versionKey(path, n));
    if (!data) return undefined;
    return { data: { data, metadata: versionMetadata(meta, n) } };
  }

  function changeVersions(path: string, versions: number[], change: (meta: KeyMetadata, n: number, info: VersionInfo) => Promise<void>) {
    if (versions.length === 0) throw new InvalidRequestError('no version number provided');
    return lock.run(path, () => changeVersionsLocked(path, versions, change));
  }

  async function changeVersionsLocked(path: string, versions: number[], change: (meta: KeyMetadata, n: number, info: VersionInfo) => Promise<void>) {
    const meta = await metadata(path);
    if (!meta) return undefined;
    for (const n of versions) {
      const info = meta.versions[String(n)];
      if (info) await change(meta, n, info);
    }
    await putJSON(storage, `metadata/${path}`, meta);
    return undefined;
  }

  const pathField: FieldSchemas = { path: { type: 'string' } };
  const versionsField: FieldSchemas = { ...pathField, versions: { type: 'comma-int-slice' } };
  const metadataFields: FieldSchemas = {
    ...pathField,
    max_versions: { type: 'int' },
    cas_required: { type: 'bool' },
    delete_version_after: { type: 'duration' },
    custom_metadata: { type: 'kv-pairs' },
  };

  function writeMetadata(_r: Request, f: FieldData): Promise<undefined> {
    const path = requirePath(f.string('path'));
    return lock.run(path, () => writeMetadataLocked(path, f));
  }

  async function writeMetadataLocked(path: string, f: FieldData): Promise<undefined> {
    const now = nowString();
    const meta: KeyMetadata = (await metadata(path)) ?? {
      key: path, versions: {}, current_version: 0, oldest_version: 0, max_versions: 0, cas_required: false,
      delete_version_after: 0, created_time: now, updated_time: now, custom_metadata: null,
    };
    if (f.has('max_versions')) {
      if (f.int('max_versions') < 0) throw new InvalidRequestError('max_versions cannot be negative');
      meta.max_versions = f.int('max_versions');
    }
    if (f.has('cas_required')) meta.cas_required = f.bool('cas_required');
    if (f.has('delete_version_after')) meta.delete_version_after = f.duration('delete_version_after');
    if (f.has('custom_metadata')) meta.custom_metadata = f.pairs('custom_metadata');
    meta.updated_time = now;
    await prune(path, meta, await config());
    await putJSON(storage, `metadata/${path}`, meta);
    return undefined;
  }

  const paths: PathDef[] = [
    {
      pattern: 'config',
      fields: { max_versions: { type: 'int' }, cas_required: { type: 'bool' }, delete_version_after: { type: 'duration' } },
      operations: {
        read: async () => {
          const cfg = await config();
          return { data: { cas_required: cfg.cas_required, delete_version_after: formatDurationSeconds(cfg.delete_version_after), max_versions: cfg.max_versions } };
        },
        update: async (_r, f) => {
          const cfg = await config();
          if (f.has('max_versions')) cfg.max_versions = f.int('max_versions');
          if (f.has('cas_required')) cfg.cas_required = f.bool('cas_required');
          if (f.has('delete_version_after')) cfg.delete_version_after = f.duration('delete_version_after');
          await putJSON(storage, 'config', cfg);
          return undefined;
        },
      },
      synopsis: 'Configures settings for the KV store.',
    },
    {
      pattern: 'data/?(?<path>.*)',
      fields: { ...pathField, version: { type: 'int' }, data: { type: 'raw' }, options: { type: 'map' } },
      existenceCheck: async (_r, f) => (await metadata(f.string('path'))) !== undefined,
      operations: {
        read: async (_r, f) => readVersion(requirePath(f.string('path')), f.int('version')),
        create: async (_r, f) => writeVersion(requirePath(f.string('path')), f.get('data'), f.map('options')),
        update: async (_r, f) => writeVersion(requirePath(f.string('path')), f.get('data'), f.map('options')),
        patch: async (_request, f) => {
          const path = requirePath(f.string('path'));
          const patch = f.get('data');
          if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) throw new InvalidRequestError('no data provided');
          return lock.run(path, async () => {
            const meta = await metadata(path);
            const info = meta?.versions[String(meta.current_version)];
            if (!meta || !info || info.destroyed || isDeleted(info)) return { statusCode: 404, raw: { body: undefined } };
            const current = (await getJSON<Record<string, unknown>>(storage, versionKey(path, meta.current_version))) ?? {};
            return writeVersionLocked(path, mergePatch(current, patch) as Record<string, unknown>, f.map('options'));
          });
        },
        delete: async (_r, f) => {
          const path = requirePath(f.string('path'));
          return lock.run(path, async () => {
            const meta = await metadata(path);
            const info = meta?.versions[String(meta.current_version)];
            if (meta && info && !info.destroyed) {
              info.deletion_time = nowString();
              await putJSON(storage, `metadata/${path}`, meta);
            }
            return undefined;
          });
        },
      },
      synopsis: 'Write, patch, read, and delete data in the versioned key-value store.',
    },
    {
      pattern: 'delete/(?<path>.+)',
      fields: versionsField,
      operations: {
        update: async (_r, f) =>
          changeVersions(f.string('path'), f.ints('versions'), async (_m, _n, info) => {
            if (!info.destroyed && info.deletion_time === '') info.deletion_time = nowString();
          }),
      },
      synopsis: 'Marks one or more versions as deleted in the KV store.',
    },
    {
      pattern: 'undelete/(?<path>.+)',
      fields: versionsField,
      operations: {
        update: async (_r, f) =>
          changeVersions(f.string('path'), f.ints('versions'), async (_m, _n, info) => {
            if (!info.destroyed) info.deletion_time = '';
          }),
      },
      synopsis: 'Undeletes one or more versions from the KV store.',
    },
    {
      pattern: 'destroy/(?<path>.+)',
      fields: versionsField,
      operations: {
        update: async (_r, f) =>
          changeVersions(f.string('path'), f.ints('versions'), async (_m, n, info) => {
            info.destroyed = true;
            await storage.delete(versionKey(f.string('path'), n));
          }),
      },
      synopsis: 'Permanently removes one or more versions in the KV store.',
    },
    {
      pattern: 'metadata/?(?<path>.*)',
      fields: metadataFields,
      existenceCheck: async (_r, f) => (await metadata(f.string('path'))) !== undefined,
      operations: {
        list: async (_r, f) => ({ data: { keys: await storage.list(`metadata/${f.string('path')}`) } }),
        read: async (_r, f) => {
          const meta = await metadata(requirePath(f.string('path')));
          if (!meta) return undefined;
          return {
            data: {
              cas_required: meta.cas_required,
              created_time: meta.created_time,
              current_version: meta.current_version,
              custom_metadata: meta.custom_metadata,
              delete_version_after: formatDurationSeconds(meta.delete_version_after),
              max_versions: meta.max_versions,
              oldest_version: meta.oldest_version,
              updated_time: meta.updated_time,
              versions: meta.versions,
            },
          };
        },
        create: writeMetadata,
        update: writeMetadata,
        patch: async (r, f) => {
          const path = requirePath(f.string('path'));
          if (!(await metadata(path))) return { statusCode: 404, raw: { body: undefined } };
          return writeMetadata(r, f);
        },
        delete: async (_r, f) => {
          const path = requirePath(f.string('path'));
          const meta = await metadata(path);
          if (meta) {
            for (const n of Object.keys(meta.versions)) await storage.delete(versionKey(path, Number(n)));
            await storage.delete(`metadata/${path}`);
          }
          return undefined;
        },
      },
      synopsis: 'Configures settings for the KV store.',
    },
    {
      pattern: 'subkeys/(?<path>.*)',
      fields: { ...pathField, version: { type: 'int' }, depth: { type: 'int' } },
      operations: {
        read: async (_r, f) => {
          const result = await readVersion(requirePath(f.string('path')), f.int('version'));
          if (!result || result.statusCode === 404) return result;
          const body = result.data as { data: Record<string, unknown>; metadata: unknown };
          return { data: { subkeys: subkeys(body.data, f.int('depth')), metadata: body.metadata } };
        },
      },
    },
    {
      pattern: '.*',
      takesArbitraryInput: true,
      operations: Object.fromEntries(
        (['create', 'update', 'read', 'list', 'delete', 'patch'] as const).map((op) => [
          op,
          async (request: Request): Promise<Response> => {
            if ((op === 'create' || op === 'update') && !context.system.strictVault && request.path !== '' && !request.path.endsWith('/')) {
              // The seed's convenience: an un-prefixed write stores the body as the data of data/<path>.
              const result = await writeVersion(request.path, { ...request.data }, {});
              const canonical = `${context.mount.path}data/${request.path}`;
              return {
                ...result,
                warnings: [
                  `This is a KV version 2 mount: the body was stored as the data of ${canonical} (read it with GET /v1/${canonical}). The canonical request is POST /v1/${canonical} with {"data": {...}}; set strict_vault = true in the server configuration to answer such writes with 404 as Vault does.`,
                ],
              };
            }
            throw new RawNotFound(INVALID_PATH(VERB[op]!));
          },
        ]),
      ),
    },
  ];
  return new FrameworkBackend({ help: 'The key/value secrets engine (version 2) stores versioned secrets.', paths });
}


function subkeys(data: Record<string, unknown>, depth: number, level = 1): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    out[k] = v !== null && typeof v === 'object' && !Array.isArray(v) && (depth === 0 || level < depth) ? subkeys(v as Record<string, unknown>, depth, level + 1) : null;
  }
  return out;
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * The `sys/` endpoints that are not logical requests and answer with bare JSON objects (no
 * envelope), most of them without a token and while sealed: init, seal-status, unseal,
 * generate-root, health, leader.
 */
import type { Core } from '../core.js';
import { InvalidRequestError, SealedError } from '../errors.js';
import type { Reply } from './server.js';

type Body = () => Record<string, unknown>;

/** Vault decodes these bodies into Go structs without JSON tags: field names match case-insensitively. */
function lowerKeys(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k.toLowerCase(), v]));
}

function stringField(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new InvalidRequestError(`failed to decode JSON input: field ${name} must be a string`);
  return value;
}

function intField(body: Record<string, unknown>, name: string): number {
  const value = body[name];
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new InvalidRequestError(`failed to decode JSON input: field ${name} must be an integer`);
  return value;
}

const METHOD_NOT_ALLOWED: Reply = { status: 405, body: { errors: [] } };

export async function serveRaw(core: Core, method: string, path: string, query: URLSearchParams, body: Body, _token: string | undefined): Promise<Reply | undefined> {
  const write = method === 'PUT' || method === 'POST';
  switch (path) {
    case 'sys/init': {
      if (method === 'GET') return { status: 200, body: { initialized: await core.initialized() } };
      if (!write) return METHOD_NOT_ALLOWED;
      const data = lowerKeys(body());
      if (Array.isArray(data.pgp_keys) && data.pgp_keys.length) throw new InvalidRequestError('pgp_keys are not supported by this server');
      if (typeof data.root_token_pgp_key === 'string' && data.root_token_pgp_key) throw new InvalidRequestError('root_token_pgp_key is not supported by this server');
      const result = await core.init(intField(data, 'secret_shares'), intField(data, 'secret_threshold'));
      return { status: 200, body: result };
    }
    case 'sys/seal-status':
      if (method !== 'GET') return METHOD_NOT_ALLOWED;
      return { status: 200, body: await core.sealStatus() };
    case 'sys/unseal': {
      if (!write) return METHOD_NOT_ALLOWED;
      const data = lowerKeys(body());
      const reset = data.reset === true;
      return { status: 200, body: await core.unseal(stringField(data, 'key'), reset) };
    }
    case 'sys/generate-root/attempt': {
      if (method === 'GET') return { status: 200, body: await core.generateRootStatus() };
      if (method === 'DELETE') {
        await core.generateRootCancel();
        return { status: 204 };
      }
      if (!write) return METHOD_NOT_ALLOWED;
      const data = lowerKeys(body());
      return { status: 200, body: await core.generateRootStart(stringField(data, 'otp') ?? '', stringField(data, 'pgp_key') ?? '') };
    }
    case 'sys/generate-root/update': {
      if (!write) return METHOD_NOT_ALLOWED;
      const data = lowerKeys(body());
      return { status: 200, body: await core.generateRootUpdate(stringField(data, 'key'), stringField(data, 'nonce')) };
    }
    case 'sys/health': {
      if (method !== 'GET' && method !== 'HEAD') return METHOD_NOT_ALLOWED;
      return health(core, query, method === 'HEAD');
    }
    case 'sys/leader': {
      if (method !== 'GET') return METHOD_NOT_ALLOWED;
      if (core.sealed) throw new SealedError();
      return {
        status: 200,
        body: { ha_enabled: false, is_self: false, active_time: '0001-01-01T00:00:00Z', leader_address: '', leader_cluster_address: '', performance_standby: false, performance_standby_last_remote_wal: 0 },
      };
    }
    default:
      return undefined;
  }
}

async function health(core: Core, query: URLSearchParams, head: boolean): Promise<Reply> {
  const code = (name: string, fallback: number) => {
    const value = query.get(name);
    if (value === null || value === '') return fallback;
    if (!/^\d+$/.test(value)) throw new InvalidRequestError(`bad code: ${name}`);
    return Number(value);
  };
  const initialized = await core.initialized();
  const status = await core.sealStatus();
  const statusCode = !initialized ? code('uninitcode', 501) : core.sealed ? code('sealedcode', 503) : code('activecode', 200);
  const body: Record<string, unknown> = {
    initialized,
    sealed: core.sealed,
    standby: false,
    performance_standby: false,
    replication_performance_mode: 'disabled',
    replication_dr_mode: 'disabled',
    server_time_utc: Math.floor(Date.now() / 1000),
    version: status.version,
    enterprise: false,
    echo_duration_ms: 0,
    clock_skew_ms: 0,
  };
  if (status.cluster_name) body.cluster_name = status.cluster_name;
  if (status.cluster_id) body.cluster_id = status.cluster_id;
  return { status: statusCode, body: head ? undefined : body };
}

/**
 * The server configuration file, in Vault's language (HCL or JSON):
 *
 *   storage "sqlite" { path = "/var/lib/portcullis/secrets.db" }     # or "etcd" { address = "http://127.0.0.1:2379" }, or "inmem" {}
 *   listener "tcp" { address = "127.0.0.1:8200"  tls_disable = true }  # or tls_cert_file / tls_key_file
 *   default_lease_ttl = "768h"
 *   max_lease_ttl = "768h"
 *   strict_vault = false     # true: no compatibility conveniences (KV v2 un-prefixed writes → 404)
 *
 * Vault's other top-level keys (`ui`, `disable_mlock`, `api_addr`, `cluster_addr`, `log_level`, …)
 * are accepted and ignored, except `log_level`, which sets the log level.
 */
import { readFile } from 'node:fs/promises';
import { parseDurationSeconds } from '../common/duration.js';
import { StartupError } from '../common/errors.js';
import { parseHostPort } from '../common/http.js';
import { DEFAULT_ETCD_PREFIX } from '../storage/index.js';
import { bodyToObject, HclSyntaxError, parseHcl, type HclValue } from './hcl.js';

export interface ServerConfig {
  readonly storageUrl: string;
  /** `inmem`, `sqlite` or `etcd`, as reported by seal status. */
  readonly storageType: string;
  readonly listener: { readonly host: string; readonly port: number; readonly tlsCertFile?: string; readonly tlsKeyFile?: string };
  readonly defaultLeaseTtl?: number;
  readonly maxLeaseTtl?: number;
  readonly strictVault: boolean;
  readonly logLevel?: string;
  readonly maxRequestSize?: number;
}

type Obj = { [key: string]: HclValue };

const IGNORED = new Set(['ui', 'disable_mlock', 'api_addr', 'cluster_addr', 'cluster_name', 'disable_cache', 'plugin_directory', 'telemetry', 'seal', 'pid_file', 'log_format', 'raw_storage_endpoint', 'enable_response_header_hostname', 'disable_clustering', 'service_registration', 'ha_storage', 'license_path', 'log_file', 'introspection_endpoint']);

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function truthy(value: HclValue | undefined): boolean {
  return value === true || value === 1 || value === 'true' || value === '1';
}

/** The single labelled block `name "label" { … }` (JSON: `{"name": {"label": {…}}}`, possibly in a list). */
function block(doc: Obj, name: string): { label: string; body: Obj } | undefined {
  let value = doc[name];
  if (Array.isArray(value)) value = value[0];
  if (!isObj(value)) return undefined;
  const labels = Object.keys(value);
  if (labels.length !== 1 || !isObj(value[labels[0]!])) throw new StartupError(`configuration: "${name}" needs exactly one block, e.g. ${name} "tcp" { … }`);
  return { label: labels[0]!, body: value[labels[0]!] as Obj };
}

export function parseServerConfig(text: string, source = 'configuration'): ServerConfig {
  let doc: Obj;
  try {
    doc = text.trim().startsWith('{') ? (JSON.parse(text) as Obj) : bodyToObject(parseHcl(text));
  } catch (error) {
    if (error instanceof HclSyntaxError || error instanceof SyntaxError) throw new StartupError(`${source}: ${error.message}`);
    throw error;
  }
  if (!isObj(doc)) throw new StartupError(`${source}: expected an object`);
  for (const key of Object.keys(doc)) {
    if (!IGNORED.has(key) && !['storage', 'backend', 'listener', 'default_lease_ttl', 'max_lease_ttl', 'strict_vault', 'log_level', 'max_request_size'].includes(key)) {
      throw new StartupError(`${source}: unknown key ${JSON.stringify(key)}`);
    }
  }
  const storage = block(doc, 'storage') ?? block(doc, 'backend');
  if (!storage) throw new StartupError(`${source}: a storage block is required, e.g. storage "sqlite" { path = "secrets.db" }`);
  let storageUrl: string;
  let storageType = storage.label;
  switch (storage.label) {
    case 'sqlite': {
      const path = storage.body.path;
      if (typeof path !== 'string' || !path) throw new StartupError(`${source}: storage "sqlite" needs path = "FILE"`);
      storageUrl = `sqlite:${path}`;
      break;
    }
    case 'etcd': {
      const address = storage.body.address;
      if (typeof address !== 'string' || !address) throw new StartupError(`${source}: storage "etcd" needs address = "http://HOST:PORT[,…]"`);
      const endpoints = address.split(',').map((a) => a.trim().replace(/^https?:\/\//, '').replace(/\/+$/, ''));
      const prefix = typeof storage.body.path === 'string' ? storage.body.path : typeof storage.body.prefix === 'string' ? storage.body.prefix : `${DEFAULT_ETCD_PREFIX}secrets/`;
      storageUrl = `etcd://${endpoints.join(',')}?prefix=${encodeURIComponent(prefix)}`;
      break;
    }
    case 'inmem':
    case 'memory':
      storageUrl = 'memory:';
      storageType = 'inmem';
      break;
    default:
      throw new StartupError(`${source}: storage "${storage.label}" is not supported; use "sqlite", "etcd" or "inmem"`);
  }
  const listenerBlock = block(doc, 'listener');
  let listener: ServerConfig['listener'] = { host: '127.0.0.1', port: 8200 };
  if (listenerBlock) {
    if (listenerBlock.label !== 'tcp') throw new StartupError(`${source}: listener "${listenerBlock.label}" is not supported; use "tcp"`);
    const body = listenerBlock.body;
    const address = typeof body.address === 'string' ? body.address : '127.0.0.1:8200';
    let where;
    try {
      where = parseHostPort(address);
    } catch (error) {
      throw new StartupError(`${source}: listener address: ${(error as Error).message}`);
    }
    listener = { host: where.host, port: where.port };
    if (!truthy(body.tls_disable)) {
      const cert = body.tls_cert_file;
      const key = body.tls_key_file;
      if (typeof cert !== 'string' || typeof key !== 'string') {
        throw new StartupError(`${source}: listener "tcp" needs tls_cert_file and tls_key_file, or tls_disable = true`);
      }
      listener = { ...listener, tlsCertFile: cert, tlsKeyFile: key };
    }
  }
  const duration = (name: string): number | undefined => {
    const value = doc[name];
    if (value === undefined) return undefined;
    try {
      return parseDurationSeconds(value as string | number);
    } catch {
      throw new StartupError(`${source}: ${name}: invalid duration ${JSON.stringify(value)}`);
    }
  };
  return {
    storageUrl,
    storageType,
    listener,
    defaultLeaseTtl: duration('default_lease_ttl'),
    maxLeaseTtl: duration('max_lease_ttl'),
    strictVault: truthy(doc.strict_vault),
    logLevel: typeof doc.log_level === 'string' ? doc.log_level.toLowerCase() : undefined,
    maxRequestSize: typeof doc.max_request_size === 'number' && doc.max_request_size > 0 ? doc.max_request_size : undefined,
  };
}

export async function loadServerConfig(file: string): Promise<ServerConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new StartupError(`cannot read configuration ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return parseServerConfig(text, file);
}

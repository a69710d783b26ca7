/**
 * Opening a store from its URL, the one way services and the command line choose a backend:
 *
 *   memory:                                  in this process only (tests)
 *   sqlite:PATH                              one SQLite file (the embedded default); created when absent
 *   etcd://HOST:PORT[,HOST:PORT…][?prefix=P] an etcd v3 cluster; every key lives under prefix P (default
 *                                            "/portcullis/"; a "/" is added to a prefix that lacks one)
 *     …&ca=FILE[&cert=FILE&key=FILE]         over TLS, trusting the CA in FILE, with a client certificate
 *
 * Failures to open are StorageErrors whose message is one line naming what and where (the command
 * line prints it as is and exits 1). Opening never overwrites or recreates anything that exists.
 */
import { InvalidArgumentError } from './types.js';
import { MemoryStorage } from './memory.js';
import type { Storage } from './types.js';

export * from './types.js';
export { MemoryStorage } from './memory.js';

export interface OpenOptions {
  /** How long to wait for a remote backend (etcd) to answer before giving up. Default 5000 ms. */
  readonly connectTimeoutMs?: number;
}

export async function openStorage(url: string, options: OpenOptions = {}): Promise<Storage> {
  const location = parseStorageUrl(url);
  switch (location.kind) {
    case 'memory':
      return new MemoryStorage();
    case 'sqlite': {
      // Loaded on demand: a process that never opens a file does not load the native module.
      const { SqliteStorage } = await import('./sqlite.js');
      return SqliteStorage.open(location.path);
    }
    case 'etcd': {
      const { EtcdStorage } = await import('./etcd.js');
      const tls = location.tls && (await readTlsFiles(url, location.tls));
      return EtcdStorage.open(location.endpoints, { prefix: location.prefix, connectTimeoutMs: options.connectTimeoutMs, tls });
    }
  }
}

export type StorageLocation =
  | { readonly kind: 'memory' }
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'etcd'; readonly endpoints: readonly string[]; readonly prefix: string; readonly tls?: EtcdTlsFiles };

/** PEM files for etcd over TLS: the CA to trust, and the client certificate and key etcd asks for. */
export interface EtcdTlsFiles {
  readonly ca: string;
  readonly cert?: string;
  readonly key?: string;
}

const ETCD_PARAMETERS = ['prefix', 'ca', 'cert', 'key'];

export const DEFAULT_ETCD_PREFIX = '/portcullis/';

/** Parses a storage URL; an `invalid` StorageError explains what is wrong with it. */
export function parseStorageUrl(url: string): StorageLocation {
  if (typeof url !== 'string') throw new InvalidArgumentError('a storage URL must be a string');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  const rest = scheme === undefined ? '' : url.slice(scheme.length + 1);
  switch (scheme) {
    case 'memory':
      if (rest !== '' && rest !== '//') throw new InvalidArgumentError(`storage URL ${url}: memory: takes no path`);
      return { kind: 'memory' };
    case 'sqlite': {
      const path = rest.startsWith('//') ? rest.slice(2) : rest;
      if (path === '') throw new InvalidArgumentError(`storage URL ${url}: want sqlite:PATH, the path of the database file`);
      return { kind: 'sqlite', path };
    }
    case 'etcd':
      return parseEtcdUrl(url, rest);
    default:
      throw new InvalidArgumentError(`storage URL ${JSON.stringify(url)}: want memory:, sqlite:PATH or etcd://HOST:PORT[,HOST:PORT][?prefix=P]`);
  }
}

function parseEtcdUrl(url: string, rest: string): StorageLocation {
  const match = /^\/\/([^/?#]+)\/?(?:\?([^#]*))?$/.exec(rest);
  if (!match) throw new InvalidArgumentError(`storage URL ${url}: want etcd://HOST:PORT[,HOST:PORT][?prefix=P]`);
  const endpoints = match[1]!.split(',').map((endpoint) => {
    const hostPort = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):(\d{1,5})$/i.exec(endpoint);
    if (!hostPort || Number(hostPort[2]) === 0 || Number(hostPort[2]) > 65535) {
      throw new InvalidArgumentError(`storage URL ${url}: ${JSON.stringify(endpoint)} is not HOST:PORT`);
    }
    return `${hostPort[1]}:${Number(hostPort[2])}`;
  });
  const query = new URLSearchParams(match[2] ?? '');
  for (const name of query.keys()) {
    if (!ETCD_PARAMETERS.includes(name)) {
      throw new InvalidArgumentError(`storage URL ${url}: unknown parameter ${JSON.stringify(name)} (known: ${ETCD_PARAMETERS.join(', ')})`);
    }
  }
  const prefix = query.get('prefix') ?? DEFAULT_ETCD_PREFIX;
  if (prefix === '') throw new InvalidArgumentError(`storage URL ${url}: the prefix must not be empty`);
  // "/registry" means the keys under "/registry/": never those of a neighbour "/registry2/".
  const location = { kind: 'etcd' as const, endpoints, prefix: prefix.endsWith('/') ? prefix : `${prefix}/` };
  const [ca, cert, key] = [query.get('ca'), query.get('cert'), query.get('key')];
  if ((cert === null) !== (key === null)) throw new InvalidArgumentError(`storage URL ${url}: cert and key go together`);
  if (ca === null) {
    if (cert !== null) throw new InvalidArgumentError(`storage URL ${url}: a client certificate needs ca=FILE (TLS)`);
    return location;
  }
  return { ...location, tls: cert === null || key === null ? { ca } : { ca, cert, key } };
}

async function readTlsFiles(url: string, files: EtcdTlsFiles): Promise<{ ca: string; cert?: string; key?: string }> {
  const { readPemFile } = await import('../common/tls.js');
  try {
    const ca = await readPemFile(files.ca, 'CERTIFICATE');
    if (files.cert === undefined || files.key === undefined) return { ca };
    return { ca, cert: await readPemFile(files.cert, 'CERTIFICATE'), key: await readPemFile(files.key, 'PRIVATE KEY') };
  } catch (error) {
    throw new InvalidArgumentError(`storage URL ${url}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Opening a store from its URL, the one way services and the command line choose a backend:
 *
 *   memory:                                  in this process only (tests)
 *   sqlite:PATH                              one SQLite file (the embedded default); created when absent
 *   etcd://HOST:PORT[,HOST:PORT…][?prefix=P] an etcd v3 cluster; every key lives under prefix P (default
 *                                            "/portcullis/"; a "/" is added to a prefix that lacks one)
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
      return EtcdStorage.open(location.endpoints, { prefix: location.prefix, connectTimeoutMs: options.connectTimeoutMs });
    }
  }
}

export type StorageLocation =
  | { readonly kind: 'memory' }
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'etcd'; readonly endpoints: readonly string[]; readonly prefix: string };

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
    if (name !== 'prefix') throw new InvalidArgumentError(`storage URL ${url}: unknown parameter ${JSON.stringify(name)} (only prefix)`);
  }
  const prefix = query.get('prefix') ?? DEFAULT_ETCD_PREFIX;
  if (prefix === '') throw new InvalidArgumentError(`storage URL ${url}: the prefix must not be empty`);
  // "/registry" means the keys under "/registry/": never those of a neighbour "/registry2/".
  return { kind: 'etcd', endpoints, prefix: prefix.endsWith('/') ? prefix : `${prefix}/` };
}

/**
 * The parts of a kubeconfig the sidecar needs to reach an API server: server URL, CA, and one of
 * client certificate, bearer token or basic credentials — for the current context (or a named one).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { StartupError } from '../common/errors.js';

export interface ClusterConnection {
  readonly server: string;
  readonly ca?: string;
  readonly insecureSkipTlsVerify: boolean;
  readonly clientCert?: string;
  readonly clientKey?: string;
  readonly token?: string;
  readonly username?: string;
  readonly password?: string;
}

interface Named<T> {
  name: string;
  [key: string]: unknown;
  cluster?: T;
  user?: T;
  context?: T;
}

export async function loadKubeconfig(file: string, contextName?: string): Promise<ClusterConnection> {
  let doc: Record<string, unknown>;
  try {
    doc = parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new StartupError(`kubeconfig ${file}: ${(error as Error).message.split('\n')[0]}`, { cause: error });
  }
  const base = path.dirname(file);
  const wanted = contextName ?? (doc['current-context'] as string | undefined);
  const context = find<{ cluster?: string; user?: string }>(doc.contexts, wanted, 'context', file)?.context ?? {};
  const cluster = find<Record<string, unknown>>(doc.clusters, context.cluster, 'cluster', file)?.cluster;
  if (!cluster || typeof cluster.server !== 'string') throw new StartupError(`kubeconfig ${file}: no server for context ${JSON.stringify(wanted)}`);
  const user = (context.user ? find<Record<string, unknown>>(doc.users, context.user, 'user', file)?.user : undefined) ?? {};

  const material = async (dataKey: string, fileKey: string, from: Record<string, unknown>) => {
    if (typeof from[dataKey] === 'string') return Buffer.from(from[dataKey] as string, 'base64').toString('utf8');
    if (typeof from[fileKey] === 'string') return readMaterial(path.resolve(base, from[fileKey] as string));
    return undefined;
  };
  return {
    server: cluster.server.replace(/\/+$/, ''),
    ca: await material('certificate-authority-data', 'certificate-authority', cluster),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    clientCert: await material('client-certificate-data', 'client-certificate', user),
    clientKey: await material('client-key-data', 'client-key', user),
    token: typeof user.token === 'string' ? user.token : typeof user.tokenFile === 'string' ? (await readMaterial(path.resolve(base, user.tokenFile))).trim() : undefined,
    username: typeof user.username === 'string' ? user.username : undefined,
    password: typeof user.password === 'string' ? user.password : undefined,
  };
}

function find<T>(list: unknown, name: string | undefined, what: string, file: string): Named<T> | undefined {
  if (name === undefined) return undefined;
  const entry = Array.isArray(list) ? (list as Named<T>[]).find((item) => item?.name === name) : undefined;
  if (!entry) throw new StartupError(`kubeconfig ${file}: no ${what} named ${JSON.stringify(name)}`);
  return entry;
}

async function readMaterial(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new StartupError(`${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { cause: error });
  }
}

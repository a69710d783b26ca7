/**
 * A real cluster API server for tests: HTTPS on 127.0.0.1 port 0, the cluster PKI in a temporary
 * data directory, a token file and a basic-auth file with the seed's users, and kubeconfigs for the
 * admin (client certificate in system:masters) and for each user.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../src/common/log.js';
import { MemoryStorage } from '../../src/storage/index.js';
import type { Storage } from '../../src/storage/types.js';
import { ServiceAccountTokenIssuer } from '../../src/cluster/authn/index.js';
import { kubeconfig } from '../../src/cluster/kubeconfig.js';
import { AesGcmTransformer } from '../../src/cluster/registry/encryption.js';
import { adminCertificate, clusterCa, servingCertificate, ADMIN_USER } from '../../src/cluster/pki.js';
import { startClusterServer, type ClusterServer } from '../../src/cluster/server.js';

/** token,user,uid,"groups" — jane is the seed's user; bob has no bindings. */
export const TOKENS = [
  'jane-token,jane,u-jane,"devs,qa"',
  'bob-token,bob,u-bob',
].join('\n');
export const PASSWORDS = ['jane-password,jane,u-jane', 'bob-password,bob,u-bob'].join('\n');

export interface TestCluster {
  readonly server: ClusterServer;
  readonly url: string;
  readonly dir: string;
  readonly caFile: string;
  readonly ca: string;
  /** Write a kubeconfig file for `who` and return its path. */
  kubeconfigFor(who: 'admin' | { token: string; user: string } | { username: string; password: string }): Promise<string>;
  close(): Promise<void>;
}

export async function startTestCluster(options: { storage?: Storage; modes?: string[]; anonymous?: boolean; dir?: string } = {}): Promise<TestCluster> {
  const dir = options.dir ?? (await mkdtemp(path.join(tmpdir(), 'portcullis-cluster-')));
  const ca = await clusterCa(dir);
  const serving = await servingCertificate(dir, ca, ['127.0.0.1']);
  await writeFile(path.join(dir, 'tokens.csv'), TOKENS);
  await writeFile(path.join(dir, 'basic.csv'), PASSWORDS);
  const caFile = path.join(dir, 'pki', 'ca.crt');
  const storage = options.storage ?? new MemoryStorage();
  const server = await startClusterServer(
    {
      storage,
      logger: silentLogger(),
      tls: { cert: serving.cert, key: serving.key, clientCa: ca.cert },
      authentication: { tokenAuthFile: path.join(dir, 'tokens.csv'), basicAuthFile: path.join(dir, 'basic.csv'), clientCa: ca.cert, anonymous: options.anonymous ?? true },
      authorizationModes: options.modes ?? ['Node', 'RBAC'],
      tokenIssuer: await ServiceAccountTokenIssuer.open(dir),
      encryption: await AesGcmTransformer.open(dir),
    },
    { host: '127.0.0.1', port: 0 },
  );
  let n = 0;
  return {
    server,
    url: server.url,
    dir,
    caFile,
    ca: ca.cert,
    async kubeconfigFor(who) {
      const file = path.join(dir, `kubeconfig-${n++}`);
      let text: string;
      if (who === 'admin') {
        const admin = await adminCertificate(ca);
        text = kubeconfig({ server: server.url, ca: ca.cert, user: ADMIN_USER, credentials: { kind: 'certificate', cert: admin.cert, key: admin.key } });
      } else if ('token' in who) {
        text = kubeconfig({ server: server.url, ca: ca.cert, user: who.user, credentials: { kind: 'token', token: who.token } });
      } else {
        text = kubeconfig({ server: server.url, ca: ca.cert, user: who.username, credentials: { kind: 'basic', username: who.username, password: who.password } });
      }
      await writeFile(file, text, { mode: 0o600 });
      return file;
    },
    async close() {
      await server.close();
      if (!options.storage) await storage.close();
      if (!options.dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface HttpAnswer {
  readonly status: number;
  readonly headers: import('node:http').IncomingHttpHeaders;
  readonly text: string;
  json(): any;
}

/** One HTTPS request to the test server, verifying its certificate against the cluster CA. */
export function call(
  cluster: Pick<TestCluster, 'url' | 'ca'>,
  method: string,
  path: string,
  options: { token?: string; basic?: [string, string]; body?: unknown; contentType?: string; headers?: Record<string, string | string[]>; cert?: { cert: string; key: string } } = {},
): Promise<HttpAnswer> {
  const url = new URL(path, cluster.url);
  const headers: Record<string, string | string[]> = { ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.basic) headers.authorization = `Basic ${Buffer.from(options.basic.join(':')).toString('base64')}`;
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    payload = Buffer.isBuffer(options.body) ? options.body : Buffer.from(typeof options.body === 'string' ? options.body : JSON.stringify(options.body));
    headers['content-type'] = options.contentType ?? 'application/json';
    headers['content-length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method, headers, ca: cluster.ca, ...(options.cert ?? {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

// Two `portcullis cluster serve` processes on one real etcd: a write through one is seen by a watch
// on the other, and RBAC objects written through one authorize requests on the other.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { etcdMissing, startEtcd, type EtcdServer } from '../storage/etcd-server.js';
import { adminCertificate, clusterCa } from '../../src/cluster/pki.js';
import { call, TOKENS } from './harness.js';

const skip = etcdMissing();
let etcd: EtcdServer | undefined;
const children: ChildProcess[] = [];
let dataDir: string;

interface Server {
  readonly url: string;
  readonly ca: string;
}

/** Start `portcullis cluster serve` and wait for its "listening on" line. */
async function serve(): Promise<Server> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/entry.ts', 'cluster', 'serve', '--data-dir', dataDir, '--secure-port', '0', '--etcd-servers', `http://${etcd!.endpoint}`, '--token-auth-file', path.join(dataDir, 'tokens.csv'), '--log-level', 'warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 60_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (https:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${err}`)));
  });
  return { url, ca: readFileSync(path.join(dataDir, 'pki', 'ca.crt'), 'utf8') };
}

before(async () => {
  if (skip) return;
  etcd = await startEtcd();
  dataDir = mkdtempSync(path.join(tmpdir(), 'portcullis-cluster-etcd-'));
  writeFileSync(path.join(dataDir, 'tokens.csv'), TOKENS);
});

after(async () => {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.on('exit', r)))));
  await etcd?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('two API servers on one etcd share state and watches', { skip }, async () => {
  const first = await serve();
  const second = await serve();
  const admin = await adminCertificate(await clusterCa(dataDir));

  // A watch on the second server, opened before the write.
  const { request } = await import('node:https');
  const events: Array<{ type: string; object: { metadata: { name: string } } }> = [];
  let buffer = '';
  const watch = request(new URL('/api/v1/namespaces/default/configmaps?watch=true', second.url), { ca: second.ca, ...admin }, (res) => {
    res.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
      }
    });
    res.on('error', () => undefined);
  });
  watch.on('error', () => undefined);
  watch.end();
  await new Promise((r) => watch.on('response', r));

  const created = await call(first, 'POST', '/api/v1/namespaces/default/configmaps', { cert: admin, body: { metadata: { name: 'shared' }, data: { k: 'v' } } });
  assert.equal(created.status, 201, created.text);
  const deadline = Date.now() + 15_000;
  while (!events.some((e) => e.object.metadata.name === 'shared')) {
    if (Date.now() > deadline) throw new Error(`the second server's watch saw nothing: ${JSON.stringify(events)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(events.find((e) => e.object.metadata.name === 'shared')!.type, 'ADDED');
  watch.destroy();

  const read = await call(second, 'GET', '/api/v1/namespaces/default/configmaps/shared', { cert: admin });
  assert.equal(read.json().metadata.resourceVersion, created.json().metadata.resourceVersion);

  // RBAC written through the first server authorizes jane on the second.
  assert.equal((await call(second, 'GET', '/api/v1/namespaces/default/pods', { token: 'jane-token' })).status, 403);
  await call(first, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { cert: admin, body: { metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'watch', 'list'] }] } });
  await call(first, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
    cert: admin,
    body: { metadata: { name: 'read-pods' }, subjects: [{ kind: 'User', name: 'jane', apiGroup: 'rbac.authorization.k8s.io' }], roleRef: { kind: 'Role', name: 'pod-reader', apiGroup: 'rbac.authorization.k8s.io' } },
  });
  const until = Date.now() + 15_000;
  while ((await call(second, 'GET', '/api/v1/namespaces/default/pods', { token: 'jane-token' })).status !== 200) {
    if (Date.now() > until) throw new Error('the binding never reached the second server');
    await new Promise((r) => setTimeout(r, 50));
  }
});

/**
 * `GET /api/v1/namespaces/bench/pods` per second over HTTPS as a token user (the seed's jane, bound
 * to the seed's pod-reader Role), beside a bare node:https server with the same certificate that
 * answers a fixed PodList of the same size, measured in the same run with autocannon in
 * alternating rounds (each server in its own process). Every request of the API server runs the
 * whole pipeline: TLS, token authentication, RBAC authorization, a storage list of 10 pods (memory
 * backend), JSON encoding.
 *
 *   npx tsx bench/cluster.ts [--rounds 3] [--duration 4] [--connections 8]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { arg, autocannon, type AutocannonResult } from './support.js';

const TOKEN = 'jane-bench-token';
const PODS = 10;

/** Child mode: serve and print the URL and the body size of the pod list on stdout. */
async function serve(kind: string): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-cluster-'));
  const { clusterCa, servingCertificate, adminCertificate } = await import('../src/cluster/pki.js');
  const ca = await clusterCa(dir);
  const serving = await servingCertificate(dir, ca, ['127.0.0.1']);
  if (kind === 'bare') {
    const body = process.env.BENCH_BODY ?? '{}';
    const server = createServer({ cert: serving.cert, key: serving.key }, (request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(body));
    });
    server.listen(0, '127.0.0.1', () => process.stdout.write(`https://127.0.0.1:${(server.address() as { port: number }).port} ${body.length}\n`));
    return;
  }
  const { silentLogger } = await import('../src/common/log.js');
  const { MemoryStorage } = await import('../src/storage/index.js');
  const { ServiceAccountTokenIssuer } = await import('../src/cluster/authn/index.js');
  const { startClusterServer } = await import('../src/cluster/server.js');
  writeFileSync(path.join(dir, 'tokens.csv'), `${TOKEN},jane,u-jane\n`);
  const server = await startClusterServer(
    {
      storage: new MemoryStorage(),
      logger: silentLogger(),
      tls: { cert: serving.cert, key: serving.key, clientCa: ca.cert },
      authentication: { tokenAuthFile: path.join(dir, 'tokens.csv'), clientCa: ca.cert, anonymous: true },
      authorizationModes: ['Node', 'RBAC'],
      tokenIssuer: await ServiceAccountTokenIssuer.open(dir),
    },
    { host: '127.0.0.1', port: 0 },
  );
  const admin = await adminCertificate(ca);
  const { request } = await import('node:https');
  const call = (method: string, p: string, body?: unknown) =>
    new Promise<string>((resolve, reject) => {
      const req = request(new URL(p, server.url), { method, ca: ca.cert, cert: admin.cert, key: admin.key, headers: { 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => ((res.statusCode ?? 500) < 300 ? resolve(text) : reject(new Error(`${method} ${p}: ${res.statusCode} ${text}`))));
      });
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  await call('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
  for (let i = 0; i < PODS; i++) await call('POST', '/api/v1/namespaces/bench/pods', { metadata: { name: `pod-${i}`, labels: { app: 'bench' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } });
  await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/bench/roles', { metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'watch', 'list'] }] });
  await call('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/bench/rolebindings', { metadata: { name: 'read-pods' }, subjects: [{ kind: 'User', name: 'jane', apiGroup: 'rbac.authorization.k8s.io' }], roleRef: { kind: 'Role', name: 'pod-reader', apiGroup: 'rbac.authorization.k8s.io' } });
  await new Promise((r) => setTimeout(r, 200));
  const list = await call('GET', '/api/v1/namespaces/bench/pods');
  process.stdout.write(`${server.url} ${list.length}\n${list}\n`);
}

function start(kind: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string; size: number; body: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve', kind], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const m = /^(https:\/\/\S+) (\d+)\n/.exec(out);
      if (!m) return;
      const rest = out.slice(m[0].length);
      if (kind === 'api' && rest.length < Number(m[2])) return;
      resolve({ child, url: m[1]!, size: Number(m[2]), body: rest.slice(0, Number(m[2])) });
    });
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
}

async function measure(url: string, duration: number, connections: number): Promise<AutocannonResult> {
  return autocannon({ url: `${url}/api/v1/namespaces/bench/pods`, duration, connections, headers: { authorization: `Bearer ${TOKEN}` }, tlsOptions: { rejectUnauthorized: false } });
}

async function main(): Promise<void> {
  const rounds = arg('--rounds', 3);
  const duration = arg('--duration', 4);
  const connections = arg('--connections', 8);
  const api = await start('api');
  const bare = await start('bare', { BENCH_BODY: api.body });
  const totals = { api: [] as number[], bare: [] as number[] };
  const latency = { api: [] as number[], bare: [] as number[] };
  try {
    for (let round = 0; round < rounds; round++) {
      for (const [name, target] of [['bare', bare], ['api', api]] as const) {
        const result = await measure(target.url, duration, connections);
        if (result.non2xx || result.errors) throw new Error(`${name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
        totals[name].push(result.requests.average);
        latency[name].push(result.latency.p99);
      }
    }
  } finally {
    api.child.kill();
    bare.child.kill();
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log(`GET /api/v1/namespaces/bench/pods (${PODS} pods, ${api.size} bytes) as a token user over HTTPS; ${rounds} alternating rounds of ${duration} s, ${connections} connections`);
  console.log(`nproc ${os.availableParallelism()}, node ${process.version}`);
  console.log('');
  console.log('server                     req/s   p99 ms');
  console.log(`bare node:https        ${fmt(mean(totals.bare)).padStart(9)}   ${mean(latency.bare).toFixed(1).padStart(6)}`);
  console.log(`cluster API server     ${fmt(mean(totals.api)).padStart(9)}   ${mean(latency.api).toFixed(1).padStart(6)}`);
  console.log(`ratio (API ÷ bare)     ${(mean(totals.api) / mean(totals.bare)).toFixed(2).padStart(9)}`);
}

const serveIndex = process.argv.indexOf('--serve');
if (serveIndex !== -1) {
  await serve(process.argv[serveIndex + 1]!);
} else {
  await main();
}

/**
 * Operations per second of the secrets service over loopback HTTP — token lookups (a non-root
 * token through the ACL), KV v2 reads, KV v2 writes, token creations — beside a bare node:http
 * server answering a fixed JSON body, measured in the same run with autocannon. Each server runs
 * in its own process (the secrets server in dev mode, in memory); the load generator runs here.
 * Servers are measured in alternating rounds so that other load on the machine falls on both alike.
 * Prints each workload's rate and its ratio to the bare server.
 *
 *   npx tsx bench/secrets.ts [--rounds 2] [--duration 5] [--connections 16]
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import os from 'node:os';
import { arg, autocannon, startServer } from './support.js';

const FIXED = JSON.stringify({ request_id: '00000000-0000-0000-0000-000000000000', lease_id: '', renewable: false, lease_duration: 0, data: { ok: true }, wrap_info: null, warnings: null, auth: null });

async function serve(kind: string): Promise<void> {
  if (kind === 'bare') {
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(FIXED) });
        response.end(FIXED);
      });
    });
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      process.stdout.write(`http://127.0.0.1:${address.port}\n`);
    });
    return;
  }
  const { startDevService } = await import('../src/secrets/server.js');
  const { silentLogger } = await import('../src/common/log.js');
  const service = await startDevService({ host: '127.0.0.1', port: 0 }, { rootTokenId: 'root' }, silentLogger());
  process.stdout.write(`${service.url}\n`);
}

async function startChild(kind: string): Promise<{ child: ChildProcess; url: string }> {
  const { child, words } = await startServer(import.meta.url, kind);
  return { child, url: words[0]! };
}

async function json(url: string, method: string, path: string, token: string, body?: unknown): Promise<any> {
  const response = await fetch(`${url}/v1/${path}`, { method, headers: { 'X-Vault-Token': token, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return text ? JSON.parse(text) : undefined;
}

async function main(): Promise<void> {
  const rounds = arg('--rounds', 2);
  const duration = arg('--duration', 5);
  const connections = arg('--connections', 16);
  const bare = await startChild('bare');
  const secrets = await startChild('secrets');
  try {
    await json(secrets.url, 'PUT', 'sys/policies/acl/bench', 'root', { policy: 'path "secret/data/bench/*" { capabilities = ["create", "read", "update"] }' });
    const token = (await json(secrets.url, 'POST', 'auth/token/create', 'root', { policies: ['bench'], ttl: '24h' })).auth.client_token as string;
    await json(secrets.url, 'POST', 'secret/data/bench/read', token, { data: { apiKey: 'x'.repeat(64) } });
    const workloads: Array<{ name: string; method: string; path: string; token: string; body?: string }> = [
      { name: 'token lookup-self', method: 'GET', path: 'auth/token/lookup-self', token },
      { name: 'KV v2 read', method: 'GET', path: 'secret/data/bench/read', token },
      { name: 'KV v2 write', method: 'POST', path: 'secret/data/bench/write', token, body: JSON.stringify({ data: { apiKey: 'y'.repeat(64) } }) },
      { name: 'token create', method: 'POST', path: 'auth/token/create', token: 'root', body: JSON.stringify({ policies: ['bench'], ttl: '1h' }) },
    ];
    const totals = new Map<string, { ours: number; base: number; p99: number; bad: number }>();
    for (let round = 0; round < rounds; round++) {
      for (const w of workloads) {
        const run = (url: string) =>
          autocannon({ url: `${url}/v1/${w.path}`, method: w.method, headers: { 'X-Vault-Token': w.token, 'Content-Type': 'application/json' }, body: w.body, duration, connections });
        const base = await run(bare.url);
        const ours = await run(secrets.url);
        const t = totals.get(w.name) ?? { ours: 0, base: 0, p99: 0, bad: 0 };
        t.ours += ours.requests.average;
        t.base += base.requests.average;
        t.p99 = Math.max(t.p99, ours.latency.p99);
        t.bad += ours.non2xx + ours.errors;
        totals.set(w.name, t);
      }
    }
    console.log(`secrets service vs bare node:http, loopback, ${connections} connections, ${rounds}×${duration}s per workload; ${os.cpus().length} CPUs, node ${process.version}`);
    console.log('workload               secrets req/s   bare req/s   ratio   secrets p99 ms   non-2xx');
    for (const [name, t] of totals) {
      const ours = t.ours / rounds;
      const base = t.base / rounds;
      console.log(`${name.padEnd(22)} ${ours.toFixed(0).padStart(13)} ${base.toFixed(0).padStart(12)} ${(ours / base).toFixed(3).padStart(7)} ${String(t.p99).padStart(16)} ${String(t.bad).padStart(9)}`);
    }
  } finally {
    bare.child.kill();
    secrets.child.kill();
  }
}

const serveIndex = process.argv.indexOf('--serve');
if (serveIndex !== -1) await serve(process.argv[serveIndex + 1]!);
else await main();

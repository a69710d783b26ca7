/**
 * Logins per second of the secrets service's AppRole and userpass methods over loopback HTTP,
 * beside a bare node:http server that answers a fixed login-shaped body, measured in the same run
 * with autocannon in alternating rounds (each server in its own process). Every login is real: it
 * checks the credential, creates an orphan service token (in-memory storage, under the barrier)
 * and answers Vault's `auth` block. userpass compares a bcrypt hash of cost 10 per login, so its
 * rate is bounded by bcrypt; the single-compare time is printed for reference.
 *
 *   npx tsx bench/secrets-auth.ts [--rounds 2] [--duration 4] [--connections 8]
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import os from 'node:os';
import { arg, autocannon, startServer } from './support.js';

const FIXED = JSON.stringify({ request_id: '00000000-0000-4000-8000-000000000000', auth: { client_token: 'hvs.fixed', policies: ['default'] } });
const PASSWORD = 'bench-password';

/** Child mode: serve, print `URL ROLE_ID SECRET_ID` on stdout. */
async function serve(kind: string): Promise<void> {
  if (kind === 'bare') {
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(FIXED));
    });
    server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${(server.address() as { port: number }).port} - -\n`));
    return;
  }
  const { silentLogger } = await import('../src/common/log.js');
  const { MemoryStorage } = await import('../src/storage/index.js');
  const { Core } = await import('../src/secrets/core.js');
  const { startSecretsServer } = await import('../src/secrets/http/server.js');
  const core = new Core({ storage: new MemoryStorage(), logger: silentLogger(), storageType: 'inmem' });
  const { rootToken } = await core.initDev();
  const server = await startSecretsServer({ core, logger: silentLogger(), host: '127.0.0.1', port: 0 });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}/v1/${path}`, { method, headers: { 'X-Vault-Token': rootToken }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  await call('POST', 'sys/auth/approle', { type: 'approle' });
  await call('POST', 'sys/auth/userpass', { type: 'userpass' });
  await call('POST', 'auth/approle/role/bench', { token_policies: 'default', token_ttl: '20m' });
  await call('POST', 'auth/userpass/users/bench', { password: PASSWORD, token_policies: 'default', token_ttl: '20m' });
  const roleId = (await call('GET', 'auth/approle/role/bench/role-id')).data.role_id as string;
  const secretId = (await call('POST', 'auth/approle/role/bench/secret-id')).data.secret_id as string;
  process.stdout.write(`${server.url} ${roleId} ${secretId}\n`);
}

async function start(kind: string): Promise<{ child: ChildProcess; url: string; roleId: string; secretId: string }> {
  const { child, words } = await startServer(import.meta.url, kind);
  return { child, url: words[0]!, roleId: words[1]!, secretId: words[2]! };
}

interface Target {
  readonly label: string;
  readonly url: string;
  readonly body: string;
}

interface Totals {
  requests: number;
  seconds: number;
  p50: number[];
  p99: number[];
  failures: number;
}

async function main(): Promise<void> {
  const rounds = arg('--rounds', 2);
  const duration = arg('--duration', 4);
  const connections = arg('--connections', 8);
  const bare = await start('bare');
  const secrets = await start('secrets');
  try {
    const targets: Target[] = [
      { label: 'bare node:http, fixed login answer', url: `${bare.url}/v1/auth/approle/login`, body: '{}' },
      { label: 'AppRole login (role_id + secret_id)', url: `${secrets.url}/v1/auth/approle/login`, body: JSON.stringify({ role_id: secrets.roleId, secret_id: secrets.secretId }) },
      { label: 'userpass login (bcrypt cost 10)', url: `${secrets.url}/v1/auth/userpass/login/bench`, body: JSON.stringify({ password: PASSWORD }) },
    ];
    for (const target of targets.slice(1)) {
      const response = await fetch(target.url, { method: 'POST', body: target.body });
      const body = (await response.json()) as { auth?: { client_token?: string } };
      if (response.status !== 200 || !body.auth?.client_token) throw new Error(`${target.label}: ${response.status} ${JSON.stringify(body)}`);
    }
    const measure = (target: Target, seconds: number) =>
      autocannon({ url: target.url, method: 'POST', headers: { 'content-type': 'application/json' }, body: target.body, connections, pipelining: 1, duration: seconds });
    for (const target of targets) await measure(target, 1); // warm-up
    const totals = new Map<string, Totals>(targets.map((t) => [t.label, { requests: 0, seconds: 0, p50: [], p99: [], failures: 0 }]));
    for (let round = 0; round < rounds; round++) {
      for (const target of targets) {
        const r = await measure(target, duration);
        const t = totals.get(target.label)!;
        t.requests += r.requests.total;
        t.seconds += duration;
        t.p50.push(r.latency.p50);
        t.p99.push(r.latency.p99);
        t.failures += r.non2xx + r.errors;
      }
    }
    const bcryptMs = await bcryptCompareMs();
    const rate = (label: string) => totals.get(label)!.requests / totals.get(label)!.seconds;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const line = (target: Target) => {
      const t = totals.get(target.label)!;
      return `${target.label.padEnd(38)} ${rate(target.label).toFixed(0).padStart(7)} req/s   p50 ${median(t.p50).toFixed(2)} ms   p99 ${median(t.p99).toFixed(2)} ms   (${t.requests} requests, ${t.failures} failed)`;
    };
    const [baseline, approle, userpass] = targets as [Target, Target, Target];
    process.stdout.write(
      [
        `secrets-auth: ${rounds} alternating rounds of ${duration}s per server, ${connections} connections; node ${process.version}, ${os.availableParallelism()} CPUs, load ${os.loadavg()[0]!.toFixed(1)}`,
        ...targets.map(line),
        `ratio AppRole/bare: ${(rate(approle.label) / rate(baseline.label)).toFixed(3)}; userpass/bare: ${(rate(userpass.label) / rate(baseline.label)).toFixed(4)}`,
        `one bcrypt compare at cost 10 (bcryptjs, this process): ${bcryptMs.toFixed(1)} ms → at most ~${(1000 / bcryptMs).toFixed(0)} userpass logins/s per core`,
        '',
      ].join('\n'),
    );
  } finally {
    bare.child.kill();
    secrets.child.kill();
  }
}

async function bcryptCompareMs(): Promise<number> {
  const { hashPassword, verifyPassword } = await import('../src/secrets/auth/userpass/password.js');
  const hash = await hashPassword(PASSWORD);
  const runs = 5;
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) await verifyPassword(PASSWORD, hash);
  return Number(process.hrtime.bigint() - start) / 1e6 / runs;
}

const serveIndex = process.argv.indexOf('--serve');
if (serveIndex !== -1) await serve(process.argv[serveIndex + 1]!);
else await main();

/**
 * Decisions per second and latency of the policy engine over loopback HTTP, for the seed's
 * `httpapi.authz` policy (`POST /v1/data/httpapi/authz`), beside a bare node:http server that
 * answers a fixed `{"result":{"allow":true}}`, measured in the same run with autocannon. Each server
 * runs in its own process; the load generator runs here. Prints both and the ratio (target ≥ 0.70).
 *
 *   npx tsx bench/policy-server.ts [--duration 10] [--connections 16]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const POLICY = `package httpapi.authz

default allow := false

allow if {
  input.method == "GET"
  input.path == ["salary", input.user]
}

allow if {
  input.method == "GET"
  some user in data.reports[input.user]
  input.path == ["salary", user]
}
`;
const BODY = JSON.stringify({ input: { method: 'GET', path: ['salary', 'bob'], user: 'bob' } });
const FIXED = '{"result":{"allow":true}}\n';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}

/** Child mode: serve, print the URL on stdout. */
async function serve(kind: string): Promise<void> {
  if (kind === 'bare') {
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(FIXED));
    });
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      process.stdout.write(`http://127.0.0.1:${address.port}\n`);
    });
    return;
  }
  const { startPolicyEngine } = await import('../src/policy/runtime.js');
  const { silentLogger } = await import('../src/common/log.js');
  const engine = await startPolicyEngine({ address: { host: '127.0.0.1', port: 0 }, logger: silentLogger() });
  await engine.store.putPolicy('httpapi/authz.rego', POLICY);
  await engine.store.putData(['reports'], { bob: ['alice'] });
  process.stdout.write(`${engine.url}\n`);
}

function start(kind: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve', kind], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const m = /^(http:\/\/\S+)\n/.exec(out);
      if (m) resolve({ child, url: m[1]! });
    });
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
}

async function measure(url: string, path: string, duration: number, connections: number): Promise<AutocannonResult> {
  const options = { url: url + path, method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY, connections, pipelining: 1 };
  await autocannon({ ...options, duration: 2 }); // warm-up (JIT, prepared queries)
  return autocannon({ ...options, duration });
}

async function main(): Promise<void> {
  const duration = arg('--duration', 10);
  const connections = arg('--connections', 16);
  const check = await start('engine');
  const probe = await fetch(`${check.url}/v1/data/httpapi/authz`, { method: 'POST', body: BODY });
  const answer = await probe.text();
  check.child.kill();
  if (answer !== FIXED) throw new Error(`the engine answered ${JSON.stringify(answer)}, not ${JSON.stringify(FIXED)}`);

  const results: Record<string, AutocannonResult> = {};
  for (const kind of ['bare', 'engine'] as const) {
    const server = await start(kind);
    try {
      results[kind] = await measure(server.url, kind === 'bare' ? '/' : '/v1/data/httpapi/authz', duration, connections);
    } finally {
      server.child.kill();
    }
  }
  const line = (label: string, r: AutocannonResult) =>
    `${label.padEnd(34)} ${r.requests.average.toFixed(0).padStart(7)} req/s   p50 ${r.latency.p50.toFixed(2)} ms   p99 ${r.latency.p99.toFixed(2)} ms   (${r.requests.total} requests, ${r.non2xx} non-2xx, ${r.errors} errors)`;
  const ratio = results.engine!.requests.average / results.bare!.requests.average;
  process.stdout.write(
    [
      `policy-server: ${duration}s per server, ${connections} connections, POST ${BODY.length}-byte input; node ${process.version}, ${os.availableParallelism()} CPUs`,
      line('bare node:http (fixed answer)', results.bare!),
      line('policy engine (httpapi.authz)', results.engine!),
      `ratio engine/bare: ${ratio.toFixed(2)} (target >= 0.70)`,
      '',
    ].join('\n'),
  );
}

const serveIndex = process.argv.indexOf('--serve');
if (serveIndex !== -1) await serve(process.argv[serveIndex + 1]!);
else await main();

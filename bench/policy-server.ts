/**
 * Decisions per second and latency of the policy engine over loopback HTTP, for the seed's
 * `httpapi.authz` policy (`POST /v1/data/httpapi/authz`), beside a bare node:http server that
 * answers a fixed `{"result":{"allow":true}}`, measured in the same run with autocannon. Each server
 * runs in its own process; the load generator runs here. The servers are measured in alternating
 * rounds, so that load from elsewhere on the machine falls on both alike. Prints both and the ratio
 * (target ≥ 0.70), and for diagnosis the same fixed answer from our HTTP plumbing
 * (src/common/http.ts, fastify) without evaluation, and each server's CPU time per request
 * (steadier than throughput when other jobs share the machine).
 *
 *   npx tsx bench/policy-server.ts [--rounds 4] [--duration 5] [--connections 16]
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import os from 'node:os';
import { arg, autocannon, startServer, type AutocannonResult } from './support.js';

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

/** Child mode: serve, print the URL on stdout. */
async function serve(kind: string): Promise<void> {
  if (kind === 'plumbing') {
    const { createHttpServer, listen } = await import('../src/common/http.js');
    const { silentLogger } = await import('../src/common/log.js');
    const server = createHttpServer({ logger: silentLogger(), errorResponse: () => ({ statusCode: 500, body: '' }) });
    server.post('/v1/data/*', (_request, reply) => reply.code(200).header('content-type', 'application/json').send(Buffer.from(FIXED)));
    process.stdout.write(`${(await listen(server, { host: '127.0.0.1', port: 0 })).url}\n`);
    return;
  }
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

/** The server process's CPU time so far, in µs. */
function cpuOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const onData = (chunk: Buffer) => {
      const m = /cpu (\d+)/.exec(String(chunk));
      if (!m) return;
      child.stdout!.off('data', onData);
      resolve(Number(m[1]));
    };
    child.stdout!.on('data', onData);
    child.stdin!.write('cpu\n');
  });
}

async function start(kind: string): Promise<{ child: ChildProcess; url: string }> {
  const { child, words } = await startServer(import.meta.url, kind, { stdin: 'pipe' });
  return { child, url: words[0]! };
}

async function measure(url: string, duration: number, connections: number): Promise<AutocannonResult> {
  return autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY, connections, pipelining: 1, duration });
}

interface Totals {
  requests: number;
  seconds: number;
  p50: number[];
  p99: number[];
  failures: number;
  /** Server CPU time spent in the measured rounds, µs. */
  cpu: number;
}

async function main(): Promise<void> {
  const rounds = arg('--rounds', 4);
  const duration = arg('--duration', 5);
  const connections = arg('--connections', 16);
  const kinds = ['bare', 'plumbing', 'engine'] as const;
  const servers = new Map<string, { child: ChildProcess; url: string }>();
  try {
    for (const kind of kinds) servers.set(kind, await start(kind));
    const engineUrl = `${servers.get('engine')!.url}/v1/data/httpapi/authz`;
    const answer = await (await fetch(engineUrl, { method: 'POST', body: BODY })).text();
    if (answer !== FIXED) throw new Error(`the engine answered ${JSON.stringify(answer)}, not ${JSON.stringify(FIXED)}`);
    const target = (kind: string) => (kind === 'engine' ? engineUrl : `${servers.get(kind)!.url}/v1/data/httpapi/authz`);
    for (const kind of kinds) await measure(target(kind), 2, connections); // warm-up (JIT, prepared queries)
    const totals = new Map<string, Totals>(kinds.map((k) => [k, { requests: 0, seconds: 0, p50: [], p99: [], failures: 0, cpu: 0 }]));
    for (let round = 0; round < rounds; round++) {
      for (const kind of kinds) {
        const child = servers.get(kind)!.child;
        const cpuBefore = await cpuOf(child);
        const r = await measure(target(kind), duration, connections);
        const t = totals.get(kind)!;
        t.cpu += (await cpuOf(child)) - cpuBefore;
        t.requests += r.requests.total;
        t.seconds += duration;
        t.p50.push(r.latency.p50);
        t.p99.push(r.latency.p99);
        t.failures += r.non2xx + r.errors;
      }
    }
    const rate = (k: string) => totals.get(k)!.requests / totals.get(k)!.seconds;
    const cpuPer = (k: string) => totals.get(k)!.cpu / totals.get(k)!.requests;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const line = (label: string, k: string) => {
      const t = totals.get(k)!;
      return `${label.padEnd(40)} ${rate(k).toFixed(0).padStart(7)} decisions/s   p50 ${median(t.p50).toFixed(2)} ms   p99 ${median(t.p99).toFixed(2)} ms   ${cpuPer(k).toFixed(0).padStart(4)} µs server CPU/request   (${t.requests} requests, ${t.failures} failed)`;
    };
    process.stdout.write(
      [
        `policy-server: ${rounds} alternating rounds of ${duration}s per server, ${connections} connections, POST ${BODY.length}-byte input; node ${process.version}, ${os.availableParallelism()} CPUs, load ${os.loadavg()[0]!.toFixed(1)}`,
        line('bare node:http, fixed answer', 'bare'),
        line('our HTTP plumbing, fixed answer', 'plumbing'),
        line('policy engine, httpapi.authz decision', 'engine'),
        `ratio engine/bare: ${(rate('engine') / rate('bare')).toFixed(2)} (target >= 0.70); plumbing/bare: ${(rate('plumbing') / rate('bare')).toFixed(2)}`,
        `server CPU per request, bare/engine: ${(cpuPer('bare') / cpuPer('engine')).toFixed(2)} (the throughput ratio if the server alone were the limit)`,
        '',
      ].join('\n'),
    );
  } finally {
    for (const { child } of servers.values()) child.kill();
  }
}

const serveIndex = process.argv.indexOf('--serve');
if (serveIndex !== -1) {
  await serve(process.argv[serveIndex + 1]!);
  // Asked "cpu" on stdin, report this process's CPU time so far (µs), for CPU per decision.
  process.stdin.on('data', () => {
    const usage = process.cpuUsage();
    process.stdout.write(`cpu ${usage.user + usage.system}\n`);
  });
}
else await main();

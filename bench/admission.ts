/**
 * Pods created per second through the cluster API server with no admission webhook, and with the
 * seed's ValidatingWebhookConfiguration (v1beta1, service opa/opa, caBundle) in the path, calling the
 * policy engine over HTTPS with the seed's untrusted-registry policy — measured on the same API
 * server in the same run. Between modes the configuration is created or deleted, and the switch is
 * confirmed by a probe (a pod from evil.example refused, or admitted) before anything is timed;
 * rounds alternate the order (without, with | with, without | …) so that drift falls on both.
 * The API server (memory storage), the policy engine and this load generator are three processes.
 *
 * Per round and mode:
 *  - throughput: --pods creations by --clients concurrent keep-alive HTTPS clients (the admin
 *    client certificate, group system:masters), pods/s = pods ÷ wall time;
 *  - latency: --serial creations one after another on one keep-alive connection. The webhook's
 *    added latency is p50(with) − p50(without) and p99(with) − p99(without) of these: with one
 *    request in flight nothing queues behind anything, so the difference is the webhook call itself
 *    (service lookup, connection, AdmissionReview, policy evaluation, answer), not contention.
 *
 * Then, to say where the webhook time goes, the AdmissionReview the API server sends POSTed straight
 * to the engine — --pods reviews by --clients callers per round, and --serial one at a time — on a
 * fresh TLS connection per call with the CA passed per request (how src/cluster/webhooks/client.ts
 * called webhooks before it kept connections alive) versus over keep-alive connections (how it calls
 * them now, one agent per target and CA).
 *
 *   npm run bench -- admission [--rounds 3] [--pods 150] [--clients 4] [--serial 100]
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { SYSTEM_MAIN, WEBHOOK_CONFIGURATION, WEBHOOK_NAME } from '../src/sync/wiring.js';
import { arg, startServer } from './support.js';

/** The seed's admission policy, from the example manifest the walkthrough applies (Rego v0). */
const UNTRUSTED_REGISTRY = (parse(readFileSync(fileURLToPath(new URL('../examples/admission/untrusted-registry.yaml', import.meta.url)), 'utf8')) as { data: { main: string } }).data.main;
const CONFIGURATION = WEBHOOK_CONFIGURATION;
const ENGINE_NAME = 'opa.opa.svc';
const NAMESPACE = 'bench';

const pod = (name: string, image: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image }] } });

// ---------------------------------------------------------------------------------------------
// Child processes: print their URL on stdout once serving.

async function serve(kind: string): Promise<void> {
  const { silentLogger } = await import('../src/common/log.js');
  if (kind === 'engine') {
    const { startPolicyEngine } = await import('../src/policy/runtime.js');
    const engine = await startPolicyEngine({
      address: { host: '127.0.0.1', port: 0 },
      logger: silentLogger(),
      tls: { cert: process.env.BENCH_ENGINE_CERT!, key: process.env.BENCH_ENGINE_KEY! },
      regoVersion: 'v0',
    });
    process.stdout.write(`${engine.url}\n`);
    return;
  }
  const dir = process.env.BENCH_CLUSTER_DIR!;
  const { clusterCa, servingCertificate } = await import('../src/cluster/pki.js');
  const { MemoryStorage } = await import('../src/storage/index.js');
  const { ServiceAccountTokenIssuer } = await import('../src/cluster/authn/index.js');
  const { startClusterServer } = await import('../src/cluster/server.js');
  const ca = await clusterCa(dir);
  const serving = await servingCertificate(dir, ca, ['127.0.0.1']);
  const server = await startClusterServer(
    {
      storage: new MemoryStorage(),
      logger: silentLogger(),
      tls: { cert: serving.cert, key: serving.key, clientCa: ca.cert },
      authentication: { clientCa: ca.cert, anonymous: false },
      authorizationModes: ['Node', 'RBAC'],
      tokenIssuer: await ServiceAccountTokenIssuer.open(dir),
    },
    { host: '127.0.0.1', port: 0 },
  );
  process.stdout.write(`${server.url}\n`);
}

async function start(kind: 'api' | 'engine', env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const { child, words } = await startServer(import.meta.url, kind, { env });
  return { child, url: words[0]! };
}

// ---------------------------------------------------------------------------------------------
// The load generator.

interface Answer {
  readonly status: number;
  readonly text: string;
  /** Milliseconds from sending the request to the end of the answer. */
  readonly ms: number;
}

function send(agent: https.Agent | false, url: URL, method: string, body?: unknown, tls: https.RequestOptions = {}): Promise<Answer> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string | number> = payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const request = https.request(url, { method, agent, headers, ...tls }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(payload);
  });
}

class ApiClient {
  constructor(
    private readonly base: string,
    private readonly agent: https.Agent,
  ) {}

  call(method: string, p: string, body?: unknown): Promise<Answer> {
    return send(this.agent, new URL(p, this.base), method, body);
  }

  async ok(method: string, p: string, body?: unknown): Promise<Answer> {
    const answer = await this.call(method, p, body);
    if (answer.status >= 300) throw new Error(`${method} ${p}: ${answer.status} ${answer.text}`);
    return answer;
  }
}

function webhookConfiguration(caBundle: string): object {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1beta1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: CONFIGURATION },
    webhooks: [
      {
        name: WEBHOOK_NAME,
        rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
        clientConfig: { caBundle: Buffer.from(caBundle).toString('base64'), service: { namespace: 'opa', name: 'opa' } },
      },
    ],
  };
}

let probes = 0;

/**
 * Create or delete the webhook configuration, then wait until the API server acts on the change
 * (it follows configurations through a watch): a pod from evil.example is refused with the
 * policy's message, or admitted.
 */
async function switchWebhook(api: ApiClient, on: boolean, caBundle: string): Promise<void> {
  if (on) await api.ok('POST', '/apis/admissionregistration.k8s.io/v1beta1/validatingwebhookconfigurations', webhookConfiguration(caBundle));
  else await api.ok('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${CONFIGURATION}`);
  for (let attempt = 0; attempt < 100; attempt++) {
    const name = `probe-${probes++}`;
    const answer = await api.call('POST', '/api/v1/namespaces/probe/pods', pod(name, 'evil.example/x'));
    if (answer.status === 201) {
      await api.ok('DELETE', `/api/v1/namespaces/probe/pods/${name}`);
      if (!on) return;
    } else if (on && answer.status === 400 && answer.text.includes("image 'evil.example/x' from untrusted registry")) {
      return;
    } else if (answer.status !== 400) {
      throw new Error(`probe pod: ${answer.status} ${answer.text}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the API server did not act on the webhook configuration being ${on ? 'created' : 'deleted'} within 100 probes`);
}

/** Create `count` pods with `clients` concurrent callers; every creation must answer 201. */
async function createPods(api: ApiClient, prefix: string, count: number, clients: number): Promise<{ seconds: number; latencies: number[] }> {
  const latencies: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < count) {
        const name = `${prefix}-${next++}`;
        const answer = await api.call('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, pod(name, 'nginx:1.25'));
        if (answer.status !== 201) throw new Error(`POST pod ${name}: ${answer.status} ${answer.text}`);
        latencies.push(answer.ms);
      }
    }),
  );
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, latencies };
}

function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const rounds = arg('--rounds', 3);
  const pods = arg('--pods', 150);
  const clients = arg('--clients', 4);
  const serial = arg('--serial', 100);

  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-admission-'));
  const { CertificateAuthority } = await import('../src/common/tls.js');
  const { clusterCa, adminCertificate } = await import('../src/cluster/pki.js');
  const clusterAuthority = await clusterCa(dir);
  const admin = await adminCertificate(clusterAuthority);
  const webhookAuthority = await CertificateAuthority.create('bench-webhook-ca');
  const engineServing = await webhookAuthority.issueServer({ commonName: ENGINE_NAME, hosts: [ENGINE_NAME] });

  const [apiProcess, engineProcess] = await Promise.all([
    start('api', { BENCH_CLUSTER_DIR: dir }),
    start('engine', { BENCH_ENGINE_CERT: engineServing.cert, BENCH_ENGINE_KEY: engineServing.key }),
  ]);
  const apiAgent = new https.Agent({ keepAlive: true, maxSockets: clients, ca: clusterAuthority.cert, cert: admin.cert, key: admin.key });
  const engineAgent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: webhookAuthority.cert, servername: ENGINE_NAME });
  const api = new ApiClient(apiProcess.url, apiAgent);
  const throughput = { without: [] as number[], with: [] as number[] };
  const concurrent = { without: [] as number[], with: [] as number[] };
  const alone = { without: [] as number[], with: [] as number[] };
  const direct = { fresh: [] as number[], kept: [] as number[] };
  const directThroughput = { fresh: [] as number[], kept: [] as number[] };
  try {
    for (const [id, text] of [['system/main.rego', SYSTEM_MAIN], ['kubernetes/admission.rego', UNTRUSTED_REGISTRY]] as const) {
      const answer = await send(engineAgent, new URL(`/v1/policies/${id}`, engineProcess.url), 'PUT', text);
      if (answer.status !== 200) throw new Error(`PUT /v1/policies/${id}: ${answer.status} ${answer.text}`);
    }
    const enginePort = Number(new URL(engineProcess.url).port);
    for (const namespace of ['opa', NAMESPACE, 'probe']) await api.ok('POST', '/api/v1/namespaces', { metadata: { name: namespace } });
    await api.ok('POST', '/api/v1/namespaces/opa/services', { metadata: { name: 'opa' }, spec: { ports: [{ name: 'https', port: 443, targetPort: enginePort }] } });
    await api.ok('POST', '/api/v1/namespaces/opa/endpoints', { metadata: { name: 'opa' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: enginePort }] }] });

    // Sanity: the timed path is the real one — with the webhook a bad pod is refused, a good one admitted.
    await switchWebhook(api, true, webhookAuthority.cert);
    const bad = await api.call('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, pod('sanity-bad', 'evil.example/x'));
    const good = await api.call('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, pod('sanity-good', 'nginx:1.25'));
    const refusal = (JSON.parse(bad.text) as { message?: string }).message;
    if (bad.status !== 400 || refusal !== `admission webhook "${WEBHOOK_NAME}" denied the request: image 'evil.example/x' from untrusted registry`) {
      throw new Error(`sanity: the bad pod was not refused by the webhook: ${bad.status} ${bad.text}`);
    }
    if (good.status !== 201) throw new Error(`sanity: the good pod was not admitted: ${good.status} ${good.text}`);
    console.log(`sanity: evil.example/x refused (${bad.status}: ${refusal}); nginx:1.25 admitted (${good.status})`);

    let webhookOn = true;
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const);
      for (const mode of order) {
        if ((mode === 'with') !== webhookOn) {
          webhookOn = mode === 'with';
          await switchWebhook(api, webhookOn, webhookAuthority.cert);
        }
        const load = await createPods(api, `r${round}-${mode}-c`, pods, clients);
        throughput[mode].push(pods / load.seconds);
        concurrent[mode].push(...load.latencies);
        alone[mode].push(...(await createPods(api, `r${round}-${mode}-s`, serial, 1)).latencies);
      }
    }

    // Where the webhook time goes: the review the API server sends, straight to the engine.
    const review = {
      apiVersion: 'admission.k8s.io/v1beta1',
      kind: 'AdmissionReview',
      request: {
        uid: '0b6a3c1e-0000-4000-8000-000000000000',
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        namespace: NAMESPACE,
        operation: 'CREATE',
        userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
        object: pod('direct', 'nginx:1.25'),
        oldObject: null,
        dryRun: false,
      },
    };
    const engineUrl = new URL('/?timeout=30s', engineProcess.url);
    const callEngine = async (agent: https.Agent | false, tls: https.RequestOptions): Promise<number> => {
      const answer = await send(agent, engineUrl, 'POST', review, tls);
      if (answer.status !== 200 || !answer.text.includes('"allowed":true')) throw new Error(`direct review: ${answer.status} ${answer.text}`);
      return answer.ms;
    };
    const fresh = { ca: webhookAuthority.cert, servername: ENGINE_NAME };
    const pool = new https.Agent({ keepAlive: true, maxSockets: clients, ca: webhookAuthority.cert, servername: ENGINE_NAME });
    const reviewsPerSecond = async (agent: https.Agent | false, tls: https.RequestOptions): Promise<number> => {
      let next = 0;
      const started = process.hrtime.bigint();
      await Promise.all(Array.from({ length: clients }, async () => {
        while (next++ < pods) await callEngine(agent, tls);
      }));
      return pods / (Number(process.hrtime.bigint() - started) / 1e9);
    };
    try {
      for (let round = 0; round < rounds; round++) {
        directThroughput.fresh.push(await reviewsPerSecond(false, fresh));
        directThroughput.kept.push(await reviewsPerSecond(pool, {}));
      }
    } finally {
      pool.destroy();
    }
    for (let i = 0; i < serial; i++) {
      direct.fresh.push(await callEngine(false, fresh));
      direct.kept.push(await callEngine(engineAgent, {}));
    }
  } finally {
    apiAgent.destroy();
    engineAgent.destroy();
    apiProcess.child.kill();
    engineProcess.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }

  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const ms = (n: number) => n.toFixed(1).padStart(7);
  console.log(`POST /api/v1/namespaces/${NAMESPACE}/pods over HTTPS (admin client certificate, keep-alive), memory storage;`);
  console.log(`${rounds} alternating rounds of ${pods} pods by ${clients} clients, then ${serial} pods one at a time, per mode`);
  console.log(`nproc ${os.availableParallelism()}, node ${process.version}, load average ${os.loadavg()[0]!.toFixed(1)}`);
  console.log('');
  console.log(`                                  pods/s   ${clients} clients p50/p99 ms   serial p50/p99 ms`);
  for (const mode of ['without', 'with'] as const) {
    const label = mode === 'without' ? 'no webhook' : 'seed validating webhook';
    console.log(
      `${label.padEnd(28)} ${fmt(mean(throughput[mode])).padStart(10)}   ${ms(percentile(concurrent[mode], 50))} ${ms(percentile(concurrent[mode], 99))}        ${ms(percentile(alone[mode], 50))} ${ms(percentile(alone[mode], 99))}`,
    );
  }
  console.log(`ratio (with ÷ without)       ${(mean(throughput.with) / mean(throughput.without)).toFixed(2).padStart(10)}`);
  console.log(
    `webhook added latency (serial, with − without): p50 ${(percentile(alone.with, 50) - percentile(alone.without, 50)).toFixed(1)} ms, p99 ${(percentile(alone.with, 99) - percentile(alone.without, 99)).toFixed(1)} ms`,
  );
  console.log('');
  console.log(`the same AdmissionReview POSTed to the engine directly   reviews/s (${clients} clients)   serial p50/p99 ms`);
  console.log(`fresh TLS connection per call, CA per request`);
  console.log(`  (as client.ts post() called before keep-alive)        ${fmt(mean(directThroughput.fresh)).padStart(10)}              ${ms(percentile(direct.fresh, 50))} ${ms(percentile(direct.fresh, 99))}`);
  console.log(`keep-alive connections                                  ${fmt(mean(directThroughput.kept)).padStart(10)}              ${ms(percentile(direct.kept, 50))} ${ms(percentile(direct.kept, 99))}`);
  console.log(`ratio (fresh ÷ keep-alive)                              ${(mean(directThroughput.fresh) / mean(directThroughput.kept)).toFixed(2).padStart(10)}`);
}

const serveIndex = process.argv.indexOf('--serve');
if (serveIndex !== -1) {
  await serve(process.argv[serveIndex + 1]!);
} else {
  await main();
}

// The sync sidecar against a real cluster API server and a real policy engine, driven with kubectl,
// as kube-mgmt is used: policy and data ConfigMaps, status annotations, replication.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/common/log.js';
import { loadKubeconfig } from '../../src/sync/kubeconfig.js';
import { parseReplicatedResource } from '../../src/sync/replicate.js';
import { KUBE_MGMT_DEFAULTS } from '../../src/sync/configmaps.js';
import { Sidecar } from '../../src/sync/sidecar.js';
import { startTestCluster, type TestCluster } from '../cluster/harness.js';
import { startEngine } from '../policy/helpers.js';
import { kubectlOk } from '../helpers/kubectl.js';

let cluster: TestCluster;
let engine: Awaited<ReturnType<typeof startEngine>>;
let sidecar: Sidecar;
let kubeconfig: string;

before(async () => {
  cluster = await startTestCluster();
  engine = await startEngine();
  kubeconfig = await cluster.kubeconfigFor('admin');
  sidecar = new Sidecar({
    cluster: await loadKubeconfig(kubeconfig),
    engine: { url: `${engine.url}/v1` },
    namespaces: ['*'],
    configMaps: KUBE_MGMT_DEFAULTS,
    replicate: [parseReplicatedResource('v1/pods', true), parseReplicatedResource('v1/namespaces', false)],
    replicatePath: 'kubernetes',
    replicateIgnoreNamespaces: ['kube-system'],
    logger: silentLogger(),
  });
  await sidecar.start();
  await kubectl(['create', 'namespace', 'opa']);
});

after(async () => {
  await sidecar?.close();
  await engine?.close();
  await cluster?.close();
});

function kubectl(args: string[], input?: string): Promise<string> {
  return kubectlOk(args, { kubeconfig, input });
}

async function engineGet(path: string): Promise<any> {
  const res = await fetch(`${engine.url}${path}`);
  return res.json();
}

/** Poll until `probe` returns a value that is not undefined (bounded: fails after 20 s). */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function statusOf(namespace: string, name: string): Promise<unknown> {
  const out = await kubectl(['get', 'configmap', '-n', namespace, name, '-o', 'json']);
  const text = JSON.parse(out).metadata.annotations?.['openpolicyagent.org/kube-mgmt-status'];
  return text === undefined ? undefined : JSON.parse(text);
}

function policyConfigMap(name: string, rego: string, labels: Record<string, string> = { 'openpolicyagent.org/policy': 'rego' }): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'opa', labels }, data: { 'main.rego': rego } });
}

const UNTRUSTED = (prefix: string) => `package kubernetes.admission

deny contains msg if {
  input.request.kind.kind == "Pod"
  some container in input.request.object.spec.containers
  startswith(container.image, "${prefix}")
  msg := sprintf("image '%v' from untrusted registry", [container.image])
}
`;

const podReview = (image: string) => ({ input: { request: { kind: { kind: 'Pod' }, object: { spec: { containers: [{ name: 'c', image }] } } } } });

async function deny(image: string): Promise<unknown> {
  const res = await fetch(`${engine.url}/v1/data/kubernetes/admission/deny`, { method: 'POST', body: JSON.stringify(podReview(image)) });
  return ((await res.json()) as { result?: unknown }).result;
}

test('a policy ConfigMap is loaded as <namespace>/<name>/<key>, marked ok, changed and removed with the ConfigMap', async () => {
  await kubectl(['apply', '-f', '-'], policyConfigMap('admission', UNTRUSTED('evil.example/')));
  assert.deepEqual(await eventually('status ok', () => statusOf('opa', 'admission')), { status: 'ok' });
  const policies = (await engineGet('/v1/policies')).result as Array<{ id: string }>;
  assert.ok(policies.some((p) => p.id === 'opa/admission/main.rego'), JSON.stringify(policies.map((p) => p.id)));
  assert.deepEqual(await deny('evil.example/nginx'), ["image 'evil.example/nginx' from untrusted registry"]);
  assert.deepEqual(await deny('docker.io/nginx'), []);

  await kubectl(['apply', '-f', '-'], policyConfigMap('admission', UNTRUSTED('bad.example/')));
  await eventually('new rule', async () => ((await deny('bad.example/x')) as unknown[]).length === 1 || undefined);
  assert.deepEqual(await deny('evil.example/nginx'), []);

  await kubectl(['delete', 'configmap', '-n', 'opa', 'admission']);
  await eventually('policy removed', async () => {
    const ids = ((await engineGet('/v1/policies')).result as Array<{ id: string }>).map((p) => p.id);
    return ids.includes('opa/admission/main.rego') ? undefined : true;
  });
  assert.equal(await deny('bad.example/x'), undefined);
});

test('a broken policy gets an error status with the engine\'s error and leaves loaded policies alone', async () => {
  await kubectl(['apply', '-f', '-'], policyConfigMap('good', UNTRUSTED('evil.example/')));
  await eventually('good loaded', async () => ((await statusOf('opa', 'good')) as { status?: string })?.status === 'ok' || undefined);

  await kubectl(['apply', '-f', '-'], policyConfigMap('broken', 'package broken\n\nallow if {\n'));
  const status = (await eventually('error status', () => statusOf('opa', 'broken'))) as { status: string; error: { code: string; errors: Array<{ code: string; location: { row: number } }> } };
  assert.equal(status.status, 'error');
  assert.equal(status.error.code, 'invalid_parameter');
  assert.equal(status.error.errors[0]!.code, 'rego_parse_error');
  assert.equal(typeof status.error.errors[0]!.location.row, 'number');
  assert.deepEqual(await deny('evil.example/nginx'), ["image 'evil.example/nginx' from untrusted registry"]);
  await kubectl(['delete', 'configmap', '-n', 'opa', 'good', 'broken']);
});

test('a policy that imports one not yet loaded is retried once that one loads', async () => {
  const user = `package app.user\n\nimport data.app.lib\n\nallow if lib.trusted(input.name)\n`;
  const lib = `package app.lib\n\ntrusted(name) if name == "alice"\n`;
  await kubectl(['apply', '-f', '-'], policyConfigMap('user', user));
  const first = (await eventually('user status', () => statusOf('opa', 'user'))) as { status: string };
  // Depending on the engine's checks an unresolved import may compile; either way it must end ok.
  await kubectl(['apply', '-f', '-'], policyConfigMap('lib', lib));
  await eventually('user ok after lib', async () => ((await statusOf('opa', 'user')) as { status?: string })?.status === 'ok' || undefined);
  const res = await fetch(`${engine.url}/v1/data/app/user/allow`, { method: 'POST', body: JSON.stringify({ input: { name: 'alice' } }) });
  assert.deepEqual(await res.json(), { result: true });
  assert.ok(first.status === 'ok' || first.status === 'error');
  await kubectl(['delete', 'configmap', '-n', 'opa', 'user', 'lib']);
});

test('a data ConfigMap loads each key as a JSON object at <namespace>/<name>/<key>; bad JSON is an error status', async () => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'registries', namespace: 'opa', labels: { 'openpolicyagent.org/data': 'opa' } }, data: { 'trusted.json': '{"prefixes":["docker.io/"]}' } };
  await kubectl(['apply', '-f', '-'], JSON.stringify(cm));
  assert.deepEqual(await eventually('data ok', () => statusOf('opa', 'registries')), { status: 'ok' });
  assert.deepEqual(await engineGet('/v1/data/opa/registries'), { result: { 'trusted.json': { prefixes: ['docker.io/'] } } });

  cm.data['trusted.json'] = '[1, 2]';
  await kubectl(['apply', '-f', '-'], JSON.stringify(cm));
  const status = (await eventually('data error', async () => {
    const s = (await statusOf('opa', 'registries')) as { status: string; error?: unknown };
    return s.status === 'error' ? s : undefined;
  })) as { error: unknown };
  assert.equal(status.error, 'data must be a JSON object');

  await kubectl(['label', 'configmap', '-n', 'opa', 'registries', 'openpolicyagent.org/data-']);
  await eventually('data removed when the label goes', async () => ((await engineGet('/v1/data/opa')).result?.registries === undefined ? true : undefined));
});

test('replicated pods and namespaces appear under data.kubernetes, follow changes, and skip ignored namespaces', async () => {
  await kubectl(['create', 'namespace', 'shop']);
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
  await kubectl(['apply', '-f', '-'], JSON.stringify(pod));
  const replicated = await eventually('pod replicated', async () => (await engineGet('/v1/data/kubernetes/pods/shop/web')).result);
  assert.equal(replicated.kind, 'Pod');
  assert.equal(replicated.spec.containers[0].image, 'nginx');
  assert.ok((await engineGet('/v1/data/kubernetes/namespaces/shop')).result);

  await kubectl(['label', 'pod', '-n', 'shop', 'web', 'tier=front']);
  await eventually('label replicated', async () => ((await engineGet('/v1/data/kubernetes/pods/shop/web')).result?.metadata?.labels?.tier === 'front' ? true : undefined));

  await kubectl(['apply', '-f', '-'], JSON.stringify({ ...pod, metadata: { name: 'hidden', namespace: 'kube-system' } }));
  await kubectl(['delete', 'pod', '-n', 'shop', 'web']);
  await eventually('pod gone', async () => ((await engineGet('/v1/data/kubernetes/pods/shop')).result?.web === undefined ? true : undefined));
  assert.equal((await engineGet('/v1/data/kubernetes/pods')).result['kube-system'], undefined);
});

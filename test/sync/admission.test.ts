// The three services together, as `portcullis up` wires them: the cluster API server, the policy
// engine (v0-compatible, with an HTTPS listener for the webhook) and the sync sidecar, plus the
// seed's admission wiring (wiring.ts). Policies arrive as ConfigMaps through kubectl; admission
// decisions are observed through kubectl too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CertificateAuthority } from '../../src/common/tls.js';
import { silentLogger } from '../../src/common/log.js';
import { startPolicyEngine, type PolicyEngine } from '../../src/policy/runtime.js';
import { KubeClient } from '../../src/sync/kube.js';
import { loadKubeconfig } from '../../src/sync/kubeconfig.js';
import { parseReplicatedResource } from '../../src/sync/replicate.js';
import { KUBE_MGMT_DEFAULTS } from '../../src/sync/configmaps.js';
import { Sidecar } from '../../src/sync/sidecar.js';
import { applyAdmissionWiring } from '../../src/sync/wiring.js';
import { startTestCluster, type TestCluster } from '../cluster/harness.js';
import { kubectl, kubectlOk } from '../helpers/kubectl.js';

let cluster: TestCluster;
let engine: PolicyEngine;
let sidecar: Sidecar;
let kubeconfig: string;

before(async () => {
  cluster = await startTestCluster();
  kubeconfig = await cluster.kubeconfigFor('admin');
  const ca = await CertificateAuthority.create('engine-ca');
  const serving = await ca.issueServer({ commonName: 'opa.opa.svc', hosts: ['opa.opa.svc'] });
  engine = await startPolicyEngine({
    address: { host: '127.0.0.1', port: 0 },
    additionalListeners: [{ address: { host: '127.0.0.1', port: 0 }, tls: serving }],
    regoVersion: 'v0',
    logger: silentLogger(),
  });
  const connection = await loadKubeconfig(kubeconfig);
  const kube = new KubeClient(connection);
  await applyAdmissionWiring(kube, { ip: '127.0.0.1', port: engine.additional[0]!.port, ca: ca.cert });
  kube.close();
  sidecar = new Sidecar({
    cluster: connection,
    engine: { url: `${engine.url}/v1` },
    namespaces: [],
    configMaps: KUBE_MGMT_DEFAULTS,
    replicate: [parseReplicatedResource('v1/pods', true), parseReplicatedResource('v1/namespaces', false)],
    replicatePath: 'kubernetes',
    replicateIgnoreNamespaces: [],
    logger: silentLogger(),
  });
  await sidecar.start();
  await eventually('system.main loaded', async () => ((await status('opa-default-system-main'))?.status === 'ok' ? true : undefined));
});

after(async () => {
  await sidecar?.close();
  await engine?.close();
  await cluster?.close();
});

async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function status(name: string): Promise<{ status: string } | undefined> {
  const out = await kubectlOk(['get', 'configmap', '-n', 'opa', name, '-o', 'jsonpath={.metadata.annotations.openpolicyagent\\.org/kube-mgmt-status}'], { kubeconfig });
  return out ? JSON.parse(out) : undefined;
}

const policy = (name: string, rego: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'opa', labels: { 'openpolicyagent.org/policy': 'rego' } }, data: { main: rego } });

const registryPolicy = (prefix: string) => `package kubernetes.admission

deny[msg] {
  input.request.kind.kind == "Pod"
  image := input.request.object.spec.containers[_].image
  startswith(image, "${prefix}")
  msg := sprintf("image '%v' from untrusted registry", [image])
}
`;

const pod = (namespace: string, name: string, image = 'nginx') =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { containers: [{ name: 'c', image }] } });

async function create(manifest: string) {
  return kubectl(['create', '-f', '-'], { kubeconfig, input: manifest });
}

/** Retry a create until admission gives the expected answer (policy loading is asynchronous). */
async function admissionSays(manifest: string, denied: RegExp | null): Promise<string> {
  return eventually(`admission ${denied ?? 'allows'}`, async () => {
    const run = await create(manifest);
    if (denied === null) return run.code === 0 ? run.stdout : undefined;
    if (run.code === 0) await kubectl(['delete', '-f', '-', '--wait=false'], { kubeconfig, input: manifest });
    return run.code === 1 && denied.test(run.stderr) ? run.stderr : undefined;
  });
}

test('a policy ConfigMap takes effect in admission, changes with the ConfigMap, and is gone with it', async () => {
  await kubectlOk(['apply', '-f', '-'], { kubeconfig, input: policy('registry', registryPolicy('evil.example/')) });
  const denied = await admissionSays(pod('default', 'p1', 'evil.example/nginx'), /denied the request/);
  assert.equal(denied.trim(), `Error from server: error when creating "STDIN": admission webhook "validating-webhook.openpolicyagent.org" denied the request: image 'evil.example/nginx' from untrusted registry`);

  await kubectlOk(['apply', '-f', '-'], { kubeconfig, input: policy('registry', registryPolicy('bad.example/')) });
  await admissionSays(pod('default', 'p2', 'bad.example/x'), /image 'bad.example\/x' from untrusted registry/);
  assert.equal((await create(pod('default', 'p3', 'evil.example/nginx'))).code, 0, 'the old rule still applies');

  await kubectlOk(['delete', 'configmap', '-n', 'opa', 'registry'], { kubeconfig });
  await admissionSays(pod('default', 'p4', 'bad.example/x'), null);
});

test('a policy can use replicated objects: a pod name already used in another namespace is refused', async () => {
  const unique = `package kubernetes.admission

deny[msg] {
  input.request.kind.kind == "Pod"
  input.request.operation == "CREATE"
  name := input.request.object.metadata.name
  other := data.kubernetes.pods[namespace][name]
  namespace != input.request.namespace
  msg := sprintf("pod name %q is already used in namespace %q", [name, namespace])
}
`;
  await kubectlOk(['apply', '-f', '-'], { kubeconfig, input: policy('unique-names', unique) });
  await eventually('policy ok', async () => ((await status('unique-names'))?.status === 'ok' ? true : undefined));
  await kubectlOk(['create', 'namespace', 'team-a'], { kubeconfig });
  await kubectlOk(['create', 'namespace', 'team-b'], { kubeconfig });
  assert.equal((await create(pod('team-a', 'api'))).stdout, 'pod/api created\n');
  const refused = await admissionSays(pod('team-b', 'api'), /already used/);
  assert.match(refused, /admission webhook "validating-webhook.openpolicyagent.org" denied the request: pod name "api" is already used in namespace "team-a"/);
  assert.equal((await create(pod('team-b', 'web'))).code, 0);
});

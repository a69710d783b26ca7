// Admission webhooks end to end: the real kubectl against the cluster API server, whose
// ValidatingWebhookConfiguration (the seed's, v1beta1) names the service opa/opa — resolved through
// Service and Endpoints objects to the real policy engine serving HTTPS — plus a mutating webhook
// double, and the failure policies with the engine stopped.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { SYSTEM_MAIN } from '../../../src/sync/wiring.js';
import { CertificateAuthority } from '../../../src/common/tls.js';
import { kubectl, kubectlOk } from '../../helpers/kubectl.js';
import { startEngine } from '../../policy/helpers.js';
import { startTestCluster, type TestCluster } from '../harness.js';

/** The seed's admission policy, from the example manifest the walkthrough applies (Rego v0). */
const UNTRUSTED_REGISTRY = (parse(readFileSync('examples/admission/untrusted-registry.yaml', 'utf8')) as { data: { main: string } }).data.main;

const pod = (name: string, image: string, labels: Record<string, string> = {}) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels }, spec: { containers: [{ name: 'c', image }] } });

let ca: CertificateAuthority;
let cluster: TestCluster;
let admin: string;

const run = (args: string[], input?: string) => kubectl(args, { kubeconfig: admin, input });
const ok = (args: string[], input?: string) => kubectlOk(args, { kubeconfig: admin, input });

/** Point Service + Endpoints `<namespace>/<name>` (port 443) at 127.0.0.1:<port>. */
async function serviceAt(namespace: string, name: string, port: number): Promise<void> {
  const created = await run(['create', 'namespace', namespace]);
  if (created.code !== 0 && !/AlreadyExists/.test(created.stderr)) throw new Error(created.stderr);
  await ok(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { ports: [{ name: 'https', port: 443, targetPort: port }] } }));
  await ok(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port }] }] }));
}

function seedWebhookConfiguration(failurePolicy?: 'Fail' | 'Ignore'): string {
  return JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1beta1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'opa-validating-webhook' },
    webhooks: [
      {
        name: 'validating-webhook.openpolicyagent.org',
        rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
        clientConfig: { caBundle: Buffer.from(ca.cert).toString('base64'), service: { namespace: 'opa', name: 'opa' } },
        ...(failurePolicy ? { failurePolicy } : {}),
      },
    ],
  });
}

before(async () => {
  ca = await CertificateAuthority.create('webhook-test-ca');
  cluster = await startTestCluster();
  admin = await cluster.kubeconfigFor('admin');
});

after(async () => {
  await cluster?.close();
});

describe('the policy engine as the seed\'s validating webhook', () => {
  let engine: Awaited<ReturnType<typeof startEngine>>;

  before(async () => {
    const serving = await ca.issueServer({ commonName: 'opa.opa.svc', hosts: ['opa.opa.svc'] });
    engine = await startEngine({ tls: { cert: serving.cert, key: serving.key }, regoVersion: 'v0' });
    for (const [id, text] of [['system/main.rego', SYSTEM_MAIN], ['kubernetes/admission.rego', UNTRUSTED_REGISTRY]]) {
      await new Promise<void>((resolve, reject) => {
        const req = https.request(`${engine.url}/v1/policies/${id}`, { method: 'PUT', ca: ca.cert, servername: 'opa.opa.svc', headers: { 'content-type': 'text/plain' } }, (r) => {
          r.resume();
          r.on('end', () => (r.statusCode === 200 ? resolve() : reject(new Error(`PUT ${id}: ${r.statusCode}`))));
        });
        req.on('error', reject);
        req.end(text);
      });
    }
    await serviceAt('opa', 'opa', engine.port);
    await ok(['apply', '-f', '-'], seedWebhookConfiguration());
  });

  test('a pod from a trusted registry is admitted; one from the untrusted registry is refused with the policy\'s message', async () => {
    assert.equal(await ok(['create', '-f', '-'], pod('good', 'nginx')), 'pod/good created\n');
    const bad = await run(['create', '-f', '-'], pod('bad', 'evil.example/nginx'));
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr.trim(), `Error from server: error when creating "STDIN": admission webhook "validating-webhook.openpolicyagent.org" denied the request: image 'evil.example/nginx' from untrusted registry`);
    const listed = await ok(['get', 'pods', '-o', 'name']);
    assert.match(listed, /pod\/good/);
    assert.doesNotMatch(listed, /pod\/bad/);
  });

  test('an update is checked too (the rule lists UPDATE)', async () => {
    const changed = await run(['patch', 'pod', 'good', '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/containers/0/image', value: 'evil.example/x' }])]);
    assert.equal(changed.code, 1);
    assert.match(changed.stderr, /admission webhook "validating-webhook.openpolicyagent.org" denied the request: image 'evil.example\/x' from untrusted registry/);
  });

  test('with the engine stopped, failurePolicy Ignore (the v1beta1 default) admits and Fail refuses with upstream\'s message', async () => {
    await engine.close();
    assert.equal(await ok(['create', '-f', '-'], pod('while-down', 'evil.example/nginx')), 'pod/while-down created\n');

    await ok(['apply', '-f', '-'], seedWebhookConfiguration('Fail'));
    const refused = await run(['create', '-f', '-'], pod('refused', 'nginx'));
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr.trim(),
      `Error from server (InternalError): error when creating "STDIN": Internal error occurred: failed calling webhook "validating-webhook.openpolicyagent.org": failed to call webhook: Post "https://opa.opa.svc:443/?timeout=30s": dial tcp 127.0.0.1:${engine.port}: connect: connection refused`,
    );
    // The configuration itself is exempt, so it can always be repaired.
    assert.match(await ok(['delete', 'validatingwebhookconfiguration', 'opa-validating-webhook']), /deleted/);
    assert.equal(await ok(['create', '-f', '-'], pod('after-repair', 'nginx')), 'pod/after-repair created\n');
  });
});

describe('a mutating webhook', () => {
  let server: https.Server;
  const seen: Array<{ apiVersion: string; operation: string; namespace: string }> = [];

  before(async () => {
    const serving = await ca.issueServer({ commonName: 'labeler.hooks.svc', hosts: ['labeler.hooks.svc'] });
    server = https.createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const review = JSON.parse(body);
        seen.push({ apiVersion: review.apiVersion, operation: review.request.operation, namespace: review.request.namespace });
        const hasLabels = review.request.object.metadata.labels !== undefined;
        const patch = hasLabels ? [{ op: 'add', path: '/metadata/labels/team', value: 'platform' }] : [{ op: 'add', path: '/metadata/labels', value: { team: 'platform' } }];
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: {
              uid: review.request.uid,
              allowed: true,
              patchType: 'JSONPatch',
              patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
              warnings: ['team label defaulted to platform'],
            },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await serviceAt('hooks', 'labeler', (server.address() as AddressInfo).port);
    await ok(['apply', '-f', '-'], JSON.stringify({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'labeler' },
      webhooks: [
        {
          name: 'labeler.hooks.example.com',
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          clientConfig: { caBundle: Buffer.from(ca.cert).toString('base64'), service: { namespace: 'hooks', name: 'labeler' } },
          objectSelector: { matchExpressions: [{ key: 'skip-labeler', operator: 'DoesNotExist' }] },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    }));
  });

  after(() => server?.close());

  test('adds a label through a JSON Patch before the object is stored, for the pods its rules and selectors name', async () => {
    const created = await run(['create', '-f', '-'], pod('labeled', 'nginx'));
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stderr, 'Warning: team label defaulted to platform\n');
    assert.equal(await ok(['get', 'pod', 'labeled', '-o', 'jsonpath={.metadata.labels.team}']), 'platform');
    assert.deepEqual(seen.at(-1), { apiVersion: 'admission.k8s.io/v1', operation: 'CREATE', namespace: 'default' });

    const calls = seen.length;
    await ok(['create', '-f', '-'], pod('skipped', 'nginx', { 'skip-labeler': 'yes' }));
    assert.equal(await ok(['get', 'pod', 'skipped', '-o', 'jsonpath={.metadata.labels.team}']), '');
    await ok(['create', 'configmap', 'not-a-pod', '--from-literal=a=b']);
    assert.equal(seen.length, calls, 'the webhook was called for a request its rules or selector exclude');
  });

  test('a dry run is refused for a webhook with side effects it did not declare safe', async () => {
    await ok(['patch', 'mutatingwebhookconfiguration', 'labeler', '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/webhooks/0/sideEffects', value: 'Some' }])]).catch(() => undefined);
    const dry = await run(['create', '--dry-run=server', '-f', '-'], pod('dry', 'nginx'));
    // v1 allows only None/NoneOnDryRun, so the patch above is refused and the dry run goes through the webhook.
    assert.equal(dry.code, 0, dry.stderr);
  });
});

// The real kubectl (1.27 and 1.33 directly, and the /usr/bin/kubectl dispatcher) against the real
// server on loopback: the admin with a client certificate in system:masters, and the seed's users
// from the token and basic-auth files.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { call, startTestCluster, type TestCluster } from './harness.js';

const KUBECTL_DIR = existsSync('/usr/bin/kubectl') ? path.dirname(realpathSync('/usr/bin/kubectl')) : '';
const missing = KUBECTL_DIR && existsSync(path.join(KUBECTL_DIR, 'kubectl.1.27')) ? undefined : 'the versioned kubectl binaries are not installed';

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Every temporary file of this suite (kubectl homes, manifests) lives under one directory, removed at the end. */
const scratch = mkdtempSync(path.join(tmpdir(), 'portcullis-kubectl-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Run kubectl with a fresh HOME (cold discovery cache) unless one is given. */
function kubectl(binary: string, kubeconfig: string, args: string[], home = mkdtempSync(path.join(scratch, 'home-'))): Promise<Run> {
  return new Promise((resolve) => {
    execFile(binary, ['--kubeconfig', kubeconfig, ...args], { env: { HOME: home, PATH: process.env.PATH ?? '' }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const SEED_RBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  namespace: default
  name: pod-reader
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "watch", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: read-pods
  namespace: default
subjects:
- kind: User
  name: jane
  apiGroup: rbac.authorization.k8s.io
roleRef:
  kind: Role
  name: pod-reader
  apiGroup: rbac.authorization.k8s.io
`;

const pod = (name: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  containers:
  - name: c
    image: nginx:1.25
`;

const configMap = (name: string, value: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
data:
  key: "${value}"
`;

describe('kubectl against the cluster API server', { skip: missing }, () => {
  let cluster: TestCluster;
  let admin: string;
  let jane: string;
  let janeBasic: string;
  let bob: string;
  let files: string;

  before(async () => {
    cluster = await startTestCluster();
    admin = await cluster.kubeconfigFor('admin');
    jane = await cluster.kubeconfigFor({ token: 'jane-token', user: 'jane' });
    janeBasic = await cluster.kubeconfigFor({ username: 'jane', password: 'jane-password' });
    bob = await cluster.kubeconfigFor({ token: 'bob-token', user: 'bob' });
    files = mkdtempSync(path.join(scratch, 'files-'));
    await writeFile(path.join(files, 'rbac.yaml'), SEED_RBAC);
    const applied = await kubectl(path.join(KUBECTL_DIR, 'kubectl.1.33'), admin, ['apply', '-f', path.join(files, 'rbac.yaml')]);
    assert.equal(applied.code, 0, applied.stderr);
  });
  after(() => cluster?.close());

  for (const version of ['1.27', '1.33']) {
    const bin = () => path.join(KUBECTL_DIR, `kubectl.${version}`);
    const ns = `v${version.replace('.', '-')}`;

    describe(`kubectl ${version}`, () => {
      test('admin: namespaces, get pods -A, create -f, apply -f twice, apply --server-side, patch, delete', async () => {
        assert.equal((await kubectl(bin(), admin, ['create', 'namespace', ns])).stdout, `namespace/${ns} created\n`);
        const all = await kubectl(bin(), admin, ['get', 'pods', '-A']);
        assert.equal(all.code, 0, all.stderr);
        const namespaces = await kubectl(bin(), admin, ['get', 'namespaces']);
        assert.match(namespaces.stdout, /^NAME\s+STATUS\s+AGE\n/);
        for (const name of ['default', 'kube-system', 'kube-public', ns]) assert.match(namespaces.stdout, new RegExp(`\\n${name}\\s+Active\\s+\\d+s`));

        await writeFile(path.join(files, `pod-${ns}.yaml`), pod('p1'));
        const created = await kubectl(bin(), admin, ['-n', ns, 'create', '-f', path.join(files, `pod-${ns}.yaml`)]);
        assert.equal(created.stdout, 'pod/p1 created\n', created.stderr);
        const pods = await kubectl(bin(), admin, ['-n', ns, 'get', 'pods']);
        assert.match(pods.stdout, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\np1\s+0\/1\s+Pending\s+0\s+\d+s\n$/);

        const cmFile = path.join(files, `cm-${ns}.yaml`);
        await writeFile(cmFile, configMap('cm1', 'one'));
        assert.equal((await kubectl(bin(), admin, ['-n', ns, 'apply', '-f', cmFile])).stdout, 'configmap/cm1 created\n');
        await writeFile(cmFile, configMap('cm1', 'two'));
        assert.equal((await kubectl(bin(), admin, ['-n', ns, 'apply', '-f', cmFile])).stdout, 'configmap/cm1 configured\n');
        const got = await kubectl(bin(), admin, ['-n', ns, 'get', 'configmap', 'cm1', '-o', 'jsonpath={.data.key}']);
        assert.equal(got.stdout, 'two');

        await writeFile(cmFile, configMap('cm1', 'three'));
        const ssa = await kubectl(bin(), admin, ['-n', ns, 'apply', '--server-side', '--force-conflicts', '-f', cmFile]);
        assert.equal(ssa.stdout, 'configmap/cm1 serverside-applied\n', ssa.stderr);
        assert.equal((await kubectl(bin(), admin, ['-n', ns, 'get', 'configmap', 'cm1', '-o', 'jsonpath={.data.key}'])).stdout, 'three');
        const managers = await kubectl(bin(), admin, ['-n', ns, 'get', 'configmap', 'cm1', '--show-managed-fields', '-o', 'jsonpath={.metadata.managedFields[*].manager}']);
        assert.match(managers.stdout, /kubectl/);

        await writeFile(path.join(files, `new-${ns}.yaml`), configMap('cm2', 'ssa'));
        const ssaCreate = await kubectl(bin(), admin, ['-n', ns, 'apply', '--server-side', '-f', path.join(files, `new-${ns}.yaml`)]);
        assert.equal(ssaCreate.stdout, 'configmap/cm2 serverside-applied\n', ssaCreate.stderr);

        const patched = await kubectl(bin(), admin, ['-n', ns, 'patch', 'configmap', 'cm1', '-p', '{"data":{"extra":"x"}}']);
        assert.equal(patched.stdout, 'configmap/cm1 patched\n', patched.stderr);
        const jsonPatched = await kubectl(bin(), admin, ['-n', ns, 'patch', 'pod', 'p1', '--type=json', '-p', '[{"op":"add","path":"/metadata/labels","value":{"app":"web"}}]']);
        assert.equal(jsonPatched.stdout, 'pod/p1 patched\n', jsonPatched.stderr);
        const smp = await kubectl(bin(), admin, ['-n', ns, 'patch', 'pod', 'p1', '-p', '{"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}']);
        assert.equal(smp.stdout, 'pod/p1 patched\n', smp.stderr);
        assert.equal((await kubectl(bin(), admin, ['-n', ns, 'get', 'pod', 'p1', '-o', 'jsonpath={.spec.containers[0].image} {.metadata.labels.app}'])).stdout, 'nginx:1.27 web');
        const noChange = await kubectl(bin(), admin, ['-n', ns, 'patch', 'configmap', 'cm1', '-p', '{"data":{"extra":"x"}}']);
        assert.equal(noChange.stdout, 'configmap/cm1 patched (no change)\n');

        const deleted = await kubectl(bin(), admin, ['-n', ns, 'delete', 'pod', 'p1']);
        assert.equal(deleted.stdout, 'pod "p1" deleted\n', deleted.stderr);
        const gone = await kubectl(bin(), admin, ['-n', ns, 'get', 'pod', 'p1']);
        assert.equal(gone.code, 1);
        assert.equal(gone.stderr, 'Error from server (NotFound): pods "p1" not found\n');
        assert.equal((await kubectl(bin(), admin, ['-n', ns, 'delete', '-f', cmFile])).stdout, 'configmap "cm1" deleted\n');
      });

      test('explain shows the fields and types of a kind from /openapi/v3', async () => {
        const explained = await kubectl(bin(), admin, ['explain', 'pods.spec.containers']);
        assert.equal(explained.code, 0, explained.stderr);
        assert.match(explained.stdout, /FIELD: containers <\[\]Object>/);
        assert.match(explained.stdout, /\n {2}image\t<string>\n/);
      });

      test('get -w receives an event for a pod created afterwards', async () => {
        assert.equal((await kubectl(bin(), admin, ['run', `existing-${ns}`, '--image=nginx:1.25', '--restart=Never'])).code, 0);
        const watcher = spawn(bin(), ['--kubeconfig', admin, '-n', 'default', 'get', 'pods', '-w'], { env: { HOME: mkdtempSync(path.join(scratch, 'home-')), PATH: process.env.PATH ?? '' } });
        let out = '';
        let err = '';
        watcher.stdout.on('data', (c: Buffer) => (out += c.toString()));
        watcher.stderr.on('data', (c: Buffer) => (err += c.toString()));
        const name = `watched-${ns}`;
        const existing = `existing-${ns}`;
        try {
          // The watch is open once kubectl has printed the pod that existed before it started.
          await waitFor(() => out.includes(existing), 20_000, `kubectl get -w to list (got ${JSON.stringify(out)} ${JSON.stringify(err)})`);
          const created = await kubectl(bin(), admin, ['run', name, '--image=nginx:1.25', '--restart=Never']);
          assert.equal(created.code, 0, created.stderr);
          await waitFor(() => out.includes(name), 20_000, `the watch to show ${name} (got ${JSON.stringify(out)} ${JSON.stringify(err)})`);
          assert.match(out, new RegExp(`${name}\\s+0/1\\s+Pending`));
        } finally {
          watcher.kill();
          await kubectl(bin(), admin, ['delete', 'pod', name, existing]);
        }
      });

      test('auth whoami, can-i, can-i --list, create token', async () => {
        const whoami = await kubectl(bin(), jane, ['auth', 'whoami']);
        assert.equal(whoami.code, 0, whoami.stderr);
        assert.match(whoami.stdout, /Username\s+jane\n/);
        assert.match(whoami.stdout, /UID\s+u-jane\n/);
        assert.match(whoami.stdout, /Groups\s+\[devs qa system:authenticated\]\n/);

        assert.deepEqual(await kubectl(bin(), jane, ['auth', 'can-i', 'list', 'pods']), { code: 0, stdout: 'yes\n', stderr: '' });
        const no = await kubectl(bin(), jane, ['auth', 'can-i', 'delete', 'pods']);
        assert.equal(no.code, 1);
        assert.equal(no.stdout, 'no\n');
        const list = await kubectl(bin(), jane, ['auth', 'can-i', '--list']);
        assert.equal(list.code, 0, list.stderr);
        assert.match(list.stdout, /\npods\s+\[\]\s+\[\]\s+\[get watch list\]\n/);
        assert.match(list.stdout, /selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/);

        const token = await kubectl(bin(), admin, ['create', 'token', 'default', '--duration=10m']);
        assert.equal(token.code, 0, token.stderr);
        assert.match(token.stdout, /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
        const sa = await cluster.kubeconfigFor({ token: token.stdout, user: 'default-sa' });
        const saWho = await kubectl(bin(), sa, ['auth', 'whoami']);
        assert.match(saWho.stdout, /Username\s+system:serviceaccount:default:default\n/);
        assert.match(saWho.stdout, /Groups\s+\[system:serviceaccounts system:serviceaccounts:default system:authenticated\]\n/);
      });

      test("the seed's Role and RoleBinding grant jane get/watch/list on pods in default and nothing more", async () => {
        for (const config of [jane, janeBasic]) {
          const listed = await kubectl(bin(), config, ['get', 'pods']);
          assert.equal(listed.code, 0, listed.stderr);
          const other = await kubectl(bin(), config, ['-n', 'kube-system', 'get', 'pods']);
          assert.equal(other.stderr, 'Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "kube-system"\n');
          const cms = await kubectl(bin(), config, ['get', 'configmaps']);
          assert.equal(cms.stderr, 'Error from server (Forbidden): configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "default"\n');
        }
        await writeFile(path.join(files, `jane-pod-${ns}.yaml`), pod('jane-pod'));
        const create = await kubectl(bin(), jane, ['create', '-f', path.join(files, `jane-pod-${ns}.yaml`)]);
        assert.equal(create.code, 1);
        assert.equal(create.stderr, `Error from server (Forbidden): error when creating "${path.join(files, `jane-pod-${ns}.yaml`)}": pods is forbidden: User "jane" cannot create resource "pods" in API group "" in the namespace "default"\n`);
      });

      test('a user without bindings is denied with the exact message', async () => {
        const denied = await kubectl(bin(), bob, ['get', 'pods']);
        assert.equal(denied.code, 1);
        assert.equal(denied.stderr, 'Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"\n');
      });

      test('--as and --as-group impersonate (checked with the impersonate verb)', async () => {
        assert.equal((await kubectl(bin(), admin, ['get', 'pods', '--as', 'jane'])).code, 0);
        const asBob = await kubectl(bin(), admin, ['get', 'pods', '--as', 'bob', '--as-group', 'devs', '--as-group', 'qa']);
        assert.equal(asBob.stderr, 'Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"\n');
        const who = await kubectl(bin(), admin, ['auth', 'whoami', '--as', 'bob', '--as-group', 'devs', '--as-group', 'qa']);
        assert.match(who.stdout, /Groups\s+\[devs qa system:authenticated\]\n/);
        const janeAsBob = await call(cluster, 'GET', '/api/v1/namespaces/default/pods', { token: 'jane-token', headers: { 'impersonate-user': 'bob' } });
        assert.equal(janeAsBob.status, 403);
        assert.deepEqual(janeAsBob.json(), {
          kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
          message: 'users "bob" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope',
          reason: 'Forbidden', details: { name: 'bob', kind: 'users' }, code: 403,
        });
      });
    });
  }

  test('jane cannot bind cluster-admin, even where she may create role bindings', async () => {
    const bin = path.join(KUBECTL_DIR, 'kubectl.1.33');
    await writeFile(
      path.join(files, 'binder.yaml'),
      `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: binder, namespace: default}
rules:
- {apiGroups: ["rbac.authorization.k8s.io"], resources: ["rolebindings"], verbs: ["create"]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: jane-binder, namespace: default}
subjects: [{kind: User, name: jane, apiGroup: rbac.authorization.k8s.io}]
roleRef: {kind: Role, name: binder, apiGroup: rbac.authorization.k8s.io}
`,
    );
    assert.equal((await kubectl(bin, admin, ['apply', '-f', path.join(files, 'binder.yaml')])).code, 0);
    await waitFor(async () => (await kubectl(bin, jane, ['auth', 'can-i', 'create', 'rolebindings'])).stdout === 'yes\n', 10_000, 'the binder role to take effect');
    const escalate = await kubectl(bin, jane, ['create', 'rolebinding', 'jane-admin', '--clusterrole=cluster-admin', '--user=jane']);
    assert.equal(escalate.code, 1);
    assert.match(
      escalate.stderr,
      /^error: failed to create rolebinding: rolebindings\.rbac\.authorization\.k8s\.io "jane-admin" is forbidden: user "jane" \(groups=\["devs" "qa" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}/,
    );
    const allowed = await kubectl(bin, jane, ['create', 'rolebinding', 'jane-reader', '--role=pod-reader', '--user=jane']);
    assert.equal(allowed.stdout, 'rolebinding.rbac.authorization.k8s.io/jane-reader created\n', allowed.stderr);
  });

  test("the seed's v1beta1 ValidatingWebhookConfiguration applies with kubectl 1.27 and 1.33, keeping v1beta1 defaults", async () => {
    const manifest = (timeout: number) => `apiVersion: admissionregistration.k8s.io/v1beta1
kind: ValidatingWebhookConfiguration
metadata:
  name: seed-policy
webhooks:
- name: validating-webhook.policy.example.com
  objectSelector:
    matchLabels: {portcullis-test: never-matches}
  rules:
  - operations: ["CREATE", "UPDATE"]
    apiGroups: ["*"]
    apiVersions: ["*"]
    resources: ["*"]
  clientConfig:
    url: https://127.0.0.1:1/v0/data/kubernetes/admission
  timeoutSeconds: ${timeout}
`;
    const file = path.join(files, 'vwc.yaml');
    await writeFile(file, manifest(5));
    const created = await kubectl(path.join(KUBECTL_DIR, 'kubectl.1.27'), admin, ['apply', '-f', file]);
    assert.equal(created.stdout, 'validatingwebhookconfiguration.admissionregistration.k8s.io/seed-policy created\n', created.stderr);
    await writeFile(file, manifest(7));
    const updated = await kubectl(path.join(KUBECTL_DIR, 'kubectl.1.33'), admin, ['apply', '-f', file]);
    assert.equal(updated.stdout, 'validatingwebhookconfiguration.admissionregistration.k8s.io/seed-policy configured\n', updated.stderr);
    const got = await kubectl(path.join(KUBECTL_DIR, 'kubectl.1.33'), admin, ['get', 'validatingwebhookconfigurations.v1.admissionregistration.k8s.io', 'seed-policy', '-o', 'jsonpath={.apiVersion} {.webhooks[0].failurePolicy} {.webhooks[0].sideEffects} {.webhooks[0].timeoutSeconds}']);
    assert.equal(got.stdout, 'admissionregistration.k8s.io/v1 Ignore Unknown 7');
    const listed = await kubectl(path.join(KUBECTL_DIR, 'kubectl.1.33'), admin, ['get', 'validatingwebhookconfigurations']);
    assert.match(listed.stdout, /^NAME\s+WEBHOOKS\s+AGE\nseed-policy\s+1\s+\d+s\n$/);
    assert.equal((await kubectl(path.join(KUBECTL_DIR, 'kubectl.1.33'), admin, ['delete', '-f', file])).code, 0);
  });

  test('the /usr/bin/kubectl dispatcher picks a kubectl from /version and works', async () => {
    const run = await kubectl('/usr/bin/kubectl', admin, ['get', 'namespaces', 'kube-system', '-o', 'name']);
    assert.equal(run.stdout, 'namespace/kube-system\n', run.stderr);
    const version = await kubectl('/usr/bin/kubectl', admin, ['version']);
    assert.match(version.stdout, /Server Version: v1\.33\.0/);
  });

  test('curl-style requests: basic and bearer credentials, 401 for a bad one', async () => {
    assert.equal((await call(cluster, 'GET', '/api/v1/namespaces/default/pods', { basic: ['jane', 'jane-password'] })).status, 200);
    assert.equal((await call(cluster, 'GET', '/api/v1/namespaces/default/pods', { token: 'jane-token' })).status, 200);
    const wrong = await call(cluster, 'GET', '/api/v1/namespaces/default/pods', { basic: ['jane', 'nope'] });
    assert.equal(wrong.status, 401);
    assert.deepEqual(wrong.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    const badToken = await kubectl(path.join(KUBECTL_DIR, 'kubectl.1.33'), await cluster.kubeconfigFor({ token: 'nope', user: 'x' }), ['get', 'pods']);
    assert.match(badToken.stderr, /\nerror: You must be logged in to the server \(the server has asked for the client to provide credentials\)\n$/);
    const typed = await kubectl(path.join(KUBECTL_DIR, 'kubectl.1.33'), await cluster.kubeconfigFor({ token: 'nope', user: 'x' }), ['create', 'configmap', 'x']);
    assert.equal(typed.stderr, 'error: failed to create configmap: Unauthorized\n');
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

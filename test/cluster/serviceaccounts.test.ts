// Service accounts as a client notices them: a token bound to a pod (kubectl create token
// --bound-object-kind Pod) works while that pod exists and is refused with 401 once it is deleted;
// a pod must run as a service account that exists (upstream's ServiceAccount admission).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectl, kubectlOk } from '../helpers/kubectl.js';
import { startTestCluster, type TestCluster } from './harness.js';

let cluster: TestCluster;
let admin: string;

before(async () => {
  cluster = await startTestCluster();
  admin = await cluster.kubeconfigFor('admin');
});
after(() => cluster?.close());

test('a pod-bound token dies with its pod', async () => {
  await kubectlOk(['create', '-f', '-'], { kubeconfig: admin, input: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'worker', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }) });
  const token = (await kubectlOk(['create', 'token', 'default', '--bound-object-kind', 'Pod', '--bound-object-name', 'worker'], { kubeconfig: admin })).trim();
  const asBot = await cluster.kubeconfigFor({ token, user: 'bot' });
  assert.match(await kubectlOk(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], { kubeconfig: asBot }), /^system:serviceaccount:default:default$/);

  await kubectlOk(['delete', 'pod', 'worker', '--wait=false'], { kubeconfig: admin });
  const refused = await kubectl(['auth', 'whoami'], { kubeconfig: asBot });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /Unauthorized/);
});

test('a pod runs as a service account that exists: a missing one is refused as upstream refuses it; default is always there', async () => {
  const pod = (namespace: string, name: string, serviceAccountName?: string) =>
    JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { ...(serviceAccountName ? { serviceAccountName } : {}), containers: [{ name: 'c', image: 'nginx' }] } });
  const ghost = await kubectl(['create', '-f', '-'], { kubeconfig: admin, input: pod('default', 'haunted', 'ghost') });
  assert.equal(ghost.code, 1);
  assert.equal(ghost.stderr.trim(), 'Error from server (Forbidden): error when creating "STDIN": pods "haunted" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found');

  await kubectlOk(['create', 'namespace', 'brand-new'], { kubeconfig: admin });
  assert.equal(await kubectlOk(['create', '-f', '-'], { kubeconfig: admin, input: pod('brand-new', 'first') }), 'pod/first created\n');
  assert.equal(await kubectlOk(['get', 'pod', '-n', 'brand-new', 'first', '-o', 'jsonpath={.spec.serviceAccountName}'], { kubeconfig: admin }), 'default');
});

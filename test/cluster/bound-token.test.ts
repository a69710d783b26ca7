// A service-account token bound to a pod (kubectl create token --bound-object-kind Pod) works while
// that pod exists and is refused with 401 once it is deleted, as upstream does.
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

// The seed's request, as its curl sends it: GET /api/v1/pods with HTTP Basic (password file) or a
// bearer token (token file). jane holds a cluster-wide pod reader here (a Role is per namespace, see
// docs/cluster.md); bob, without bindings, is refused with the exact 403; a wrong password is 401.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlOk } from '../helpers/kubectl.js';
import { call, startTestCluster, type TestCluster } from './harness.js';

let cluster: TestCluster;

before(async () => {
  cluster = await startTestCluster();
  const admin = await cluster.kubeconfigFor('admin');
  await kubectlOk(['create', 'clusterrole', 'pod-reader', '--verb=get,list,watch', '--resource=pods'], { kubeconfig: admin });
  await kubectlOk(['create', 'clusterrolebinding', 'jane-reads-pods', '--clusterrole=pod-reader', '--user=jane'], { kubeconfig: admin });
  await kubectlOk(['run', 'web', '--image=nginx'], { kubeconfig: admin });
});
after(() => cluster?.close());

test('GET /api/v1/pods with basic credentials and with a bearer token; refused without a binding', async () => {
  for (const credentials of [{ basic: ['jane', 'jane-password'] as [string, string] }, { token: 'jane-token' }]) {
    const answer = await call(cluster, 'GET', '/api/v1/pods', credentials);
    assert.equal(answer.status, 200);
    assert.equal(answer.json().kind, 'PodList');
    assert.deepEqual(answer.json().items.map((p: { metadata: { name: string } }) => p.metadata.name), ['web']);
  }
  const bob = await call(cluster, 'GET', '/api/v1/pods', { basic: ['bob', 'bob-password'] });
  assert.equal(bob.status, 403);
  assert.equal(bob.json().message, 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" at the cluster scope');
  const wrong = await call(cluster, 'GET', '/api/v1/pods', { basic: ['jane', 'wrong'] });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.json().message, 'Unauthorized');
});

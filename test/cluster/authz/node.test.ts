import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeAuthorizer, NodeGraph } from '../../../src/cluster/authz/node.js';
import { nonResource, resource, user } from './fixtures.js';

const pod = (namespace: string, name: string, nodeName: string | undefined, spec: object = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace, name },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'i', envFrom: [{ configMapRef: { name: 'env-cm' } }] }], ...spec },
});

test('Node authorizer: one row per case', () => {
  const graph = new NodeGraph();
  graph.apply({ type: 'ADDED', object: pod('default', 'web', 'n1', { serviceAccountName: 'web-sa', volumes: [{ name: 'v', secret: { secretName: 'web-tls' } }] }) });
  graph.apply({ type: 'ADDED', object: pod('default', 'unscheduled', undefined, { volumes: [{ name: 'v', secret: { secretName: 'other' } }] }) });
  const authorizer = new NodeAuthorizer(graph);
  const n1 = user('system:node:n1', 'system:nodes', 'system:authenticated');
  const n2 = user('system:node:n2', 'system:nodes');
  const rows: Array<[string, ReturnType<typeof resource>, string, string]> = [
    ['not a node', resource(user('jane'), 'get', 'default', '', 'secrets', 'web-tls'), 'no-opinion', ''],
    ['a node name without the group is not a node', resource(user('system:node:n1'), 'get', 'default', '', 'secrets', 'web-tls'), 'no-opinion', ''],
    ['secret of its pod', resource(n1, 'get', 'default', '', 'secrets', 'web-tls'), 'allow', ''],
    ['configmap from envFrom', resource(n1, 'get', 'default', '', 'configmaps', 'env-cm'), 'allow', ''],
    ['secret of another node\'s pod', resource(n2, 'get', 'default', '', 'secrets', 'web-tls'), 'no-opinion', "no relationship found between node 'n2' and this object"],
    ['unrelated secret', resource(n1, 'get', 'default', '', 'secrets', 'other'), 'no-opinion', "no relationship found between node 'n1' and this object"],
    ['list of one named secret (fieldSelector)', resource(n1, 'list', 'default', '', 'secrets', 'web-tls'), 'allow', ''],
    ['list secrets', resource(n1, 'list', 'default', '', 'secrets'), 'no-opinion', 'No Object name found'],
    ['write a secret', resource(n1, 'update', 'default', '', 'secrets', 'web-tls'), 'no-opinion', 'can only read resources of this type'],
    ['a PVC nobody references', resource(n1, 'get', 'default', '', 'persistentvolumeclaims', 'data'), 'no-opinion', "no relationship found between node 'n1' and this object"],
    ['token for its pod\'s service account', resource(n1, 'create', 'default', '', 'serviceaccounts', 'web-sa', 'token'), 'allow', ''],
    ['token for another service account', resource(n1, 'create', 'default', '', 'serviceaccounts', 'default', 'token'), 'no-opinion', "no relationship found between node 'n1' and this object"],
    ['its own node', resource(n1, 'patch', '', '', 'nodes', 'n1', 'status'), 'allow', ''],
    ['another node', resource(n1, 'patch', '', '', 'nodes', 'n2', 'status'), 'no-opinion', "node 'n1' cannot modify node 'n2'"],
    ['read another node', resource(n1, 'get', '', '', 'nodes', 'n2'), 'allow', ''],
    ['its lease', resource(n1, 'update', 'kube-node-lease', 'coordination.k8s.io', 'leases', 'n1'), 'allow', ''],
    ['another lease', resource(n1, 'update', 'kube-node-lease', 'coordination.k8s.io', 'leases', 'n2'), 'no-opinion', 'can only access node lease with the same name as the requesting node'],
    ['a lease elsewhere', resource(n1, 'get', 'default', 'coordination.k8s.io', 'leases', 'n1'), 'no-opinion', 'can only access leases in the "kube-node-lease" system namespace'],
    ['another node\'s pod', resource(n2, 'get', 'default', '', 'pods', 'web'), 'no-opinion', "no relationship found between node 'n2' and this object"],
    ['status of its pod', resource(n1, 'patch', 'default', '', 'pods', 'web', 'status'), 'allow', ''],
    ['configmaps nobody references', resource(n1, 'get', 'kube-system', '', 'configmaps', 'x'), 'no-opinion', "no relationship found between node 'n1' and this object"],
    ['cluster roles', resource(n1, 'list', '', 'rbac.authorization.k8s.io', 'clusterroles'), 'no-opinion', ''],
    ['its pod', resource(n1, 'get', 'default', '', 'pods', 'web'), 'allow', ''],
    ['list pods (static rule)', resource(n1, 'list', '', '', 'pods'), 'allow', ''],
    ['events', resource(n1, 'create', 'default', '', 'events'), 'allow', ''],
    ['no paths', nonResource(n1, 'get', '/healthz'), 'no-opinion', ''],
    ['unknown node', resource(user('system:node:', 'system:nodes'), 'get', '', '', 'nodes', 'x'), 'no-opinion', 'unknown node for user "system:node:"'],
  ];
  for (const [name, attributes, decision, reason] of rows) assert.deepEqual(authorizer.authorize(attributes), { decision, reason }, name);

  graph.apply({ type: 'DELETED', object: pod('default', 'web', 'n1') });
  assert.equal(authorizer.authorize(resource(n1, 'get', 'default', '', 'secrets', 'web-tls')).decision, 'no-opinion');
});

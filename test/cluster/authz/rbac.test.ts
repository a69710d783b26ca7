import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RbacIndex } from '../../../src/cluster/authz/rbac.js';
import type { ObjectEvent } from '../../../src/cluster/authz/types.js';
import { clusterRole, clusterRoleBinding, groupSubject, nonResource, resource, role, roleBinding, saSubject, user, userSubject } from './fixtures.js';

const added = (object: object): ObjectEvent => ({ type: 'ADDED', object });

function seedIndex(): RbacIndex {
  const index = new RbacIndex();
  for (const object of [
    role('default', 'pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'watch', 'list'] }]),
    roleBinding('default', 'read-pods', 'Role', 'pod-reader', [userSubject('jane')]),
    clusterRole('secret-reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]),
    roleBinding('dev', 'read-secrets', 'ClusterRole', 'secret-reader', [groupSubject('devs')]),
    clusterRole('node-viewer', [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] }, { nonResourceURLs: ['/metrics'], verbs: ['get'] }]),
    clusterRoleBinding('view-nodes', 'node-viewer', [groupSubject('ops'), saSubject('monitor', 'kube-system')]),
    roleBinding('ci', 'sa-reads-pods', 'ClusterRole', 'pod-lister', [saSubject('builder')]),
    clusterRole('pod-lister', [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]),
    roleBinding('default', 'dangling', 'Role', 'missing', [userSubject('dan')]),
    clusterRoleBinding('dangling-cluster', 'gone', [userSubject('dan')]),
  ]) {
    index.apply(added(object));
  }
  return index;
}

test('decisions and reasons: one row per case', () => {
  const index = seedIndex();
  const jane = user('jane', 'system:authenticated');
  const dev = user('dora', 'devs', 'system:authenticated');
  const op = user('olga', 'ops');
  const monitor = user('system:serviceaccount:kube-system:monitor', 'system:serviceaccounts');
  const builder = user('system:serviceaccount:ci:builder');
  const rows: Array<[string, ReturnType<typeof resource>, string, string]> = [
    ['Role by User', resource(jane, 'list', 'default', '', 'pods'), 'allow', 'RBAC: allowed by RoleBinding "read-pods/default" of Role "pod-reader" to User "jane"'],
    ['Role in another namespace', resource(jane, 'list', 'other', '', 'pods'), 'no-opinion', ''],
    ['verb not granted', resource(jane, 'delete', 'default', '', 'pods', 'p'), 'no-opinion', ''],
    ['cluster scope is not a namespace', resource(jane, 'list', '', '', 'pods'), 'no-opinion', ''],
    ['RoleBinding to ClusterRole by Group', resource(dev, 'get', 'dev', '', 'secrets', 's'), 'allow', 'RBAC: allowed by RoleBinding "read-secrets/dev" of ClusterRole "secret-reader" to Group "devs"'],
    ['RoleBinding to ClusterRole only in its namespace', resource(dev, 'get', 'prod', '', 'secrets', 's'), 'no-opinion', ''],
    ['ClusterRoleBinding by Group at cluster scope', resource(op, 'list', '', '', 'nodes'), 'allow', 'RBAC: allowed by ClusterRoleBinding "view-nodes" of ClusterRole "node-viewer" to Group "ops"'],
    ['ClusterRoleBinding applies in every namespace', resource(op, 'get', 'any', '', 'nodes', 'n1'), 'allow', 'RBAC: allowed by ClusterRoleBinding "view-nodes" of ClusterRole "node-viewer" to Group "ops"'],
    ['non-resource URL', nonResource(op, 'get', '/metrics'), 'allow', 'RBAC: allowed by ClusterRoleBinding "view-nodes" of ClusterRole "node-viewer" to Group "ops"'],
    ['ServiceAccount subject with namespace', resource(monitor, 'list', '', '', 'nodes'), 'allow', 'RBAC: allowed by ClusterRoleBinding "view-nodes" of ClusterRole "node-viewer" to ServiceAccount "monitor/kube-system"'],
    ['ServiceAccount subject defaults to the binding namespace', resource(builder, 'list', 'ci', '', 'pods'), 'allow', 'RBAC: allowed by RoleBinding "sa-reads-pods/ci" of ClusterRole "pod-lister" to ServiceAccount "builder/ci"'],
    ['a user named like a group is not the group', resource(user('ops'), 'list', '', '', 'nodes'), 'no-opinion', ''],
    ['missing roles are reported, two in brackets', resource(user('dan'), 'get', 'default', '', 'pods', 'p'), 'no-opinion', 'RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "missing" not found]'],
    ['one missing role without brackets', resource(user('dan'), 'get', '', '', 'nodes', 'n'), 'no-opinion', 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found'],
  ];
  for (const [name, attributes, decision, reason] of rows) assert.deepEqual(index.authorize(attributes), { decision, reason }, name);
});

test('MODIFIED replaces and DELETED removes roles and bindings', () => {
  const index = seedIndex();
  const jane = user('jane');
  const list = resource(jane, 'list', 'default', '', 'pods');
  index.apply({ type: 'MODIFIED', object: roleBinding('default', 'read-pods', 'Role', 'pod-reader', [userSubject('bob')]) });
  assert.equal(index.authorize(list).decision, 'no-opinion');
  assert.equal(index.authorize({ ...list, user: user('bob') }).decision, 'allow');
  index.apply({ type: 'MODIFIED', object: role('default', 'pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]) });
  assert.equal(index.authorize({ ...list, user: user('bob') }).decision, 'no-opinion');
  index.apply({ type: 'DELETED', object: role('default', 'pod-reader', []) });
  assert.deepEqual(index.authorize({ ...list, user: user('bob') }), { decision: 'no-opinion', reason: 'RBAC: role.rbac.authorization.k8s.io "pod-reader" not found' });
  index.apply({ type: 'DELETED', object: roleBinding('default', 'read-pods', 'Role', 'pod-reader', []) });
  assert.deepEqual(index.authorize({ ...list, user: user('bob') }), { decision: 'no-opinion', reason: '' });
  assert.equal(index.size.bindings, 5);
});

test('objects of other kinds and malformed objects are ignored', () => {
  const index = new RbacIndex();
  index.apply(added({ kind: 'ConfigMap', metadata: { name: 'x', namespace: 'y' } }));
  index.apply(added({ kind: 'RoleBinding', metadata: { namespace: 'y' } }));
  index.apply(added({ kind: 'RoleBinding', metadata: { name: 'n', namespace: 'y' }, subjects: [{ kind: 'User', name: 'u' }] }));
  index.apply(added({ kind: 'ClusterRole', metadata: { name: 'r' }, rules: [{ verbs: 'get' }, null, { verbs: ['get'], apiGroups: '', resources: ['pods', 7] }] }));
  assert.deepEqual(index.size, { roles: 0, clusterRoles: 1, bindings: 0 });
  index.apply(added(clusterRoleBinding('b', 'r', [userSubject('u')])));
  // apiGroups was a string, not a list: the rule keeps no groups and matches nothing.
  assert.deepEqual(index.rulesFor(user('u'), ''), { resourceRules: [{ verbs: ['get'], apiGroups: [], resources: ['pods'] }], nonResourceRules: [], incomplete: false });
  assert.equal(index.authorize(resource(user('u'), 'get', '', '', 'pods', 'p')).decision, 'no-opinion');
});

test('rulesFor: cluster-wide rules plus the namespace\'s, split for SelfSubjectRulesReview', () => {
  const index = seedIndex();
  assert.deepEqual(index.rulesFor(user('olga', 'ops', 'devs'), 'dev'), {
    resourceRules: [
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['nodes'] },
      { verbs: ['get'], apiGroups: [''], resources: ['secrets'] },
    ],
    nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }],
    incomplete: false,
  });
  assert.deepEqual(index.rulesFor(user('dan'), 'default'), {
    resourceRules: [],
    nonResourceRules: [],
    incomplete: false,
    evaluationError: '[clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "missing" not found]',
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregateClusterRoles, labelSelectorMatches, rulesEqual } from '../../../src/cluster/authz/aggregation.js';
import { bootstrapPolicy } from '../../../src/cluster/authz/bootstrap.js';
import { buildAuthorizer } from '../../../src/cluster/authz/modes.js';
import { RbacIndex } from '../../../src/cluster/authz/rbac.js';
import type { ClusterRole, ClusterRoleBinding } from '../../../src/cluster/authz/types.js';
import { clusterRole, nonResource, resource, roleBinding, user, userSubject } from './fixtures.js';

/** The bootstrap policy as the server runs it: objects stored, aggregated rules written back. */
function bootstrapped(extra: object[] = []): RbacIndex {
  const objects = [...bootstrapPolicy(), ...extra] as (ClusterRole | ClusterRoleBinding)[];
  const aggregated = aggregateClusterRoles(objects);
  const rbac = new RbacIndex();
  for (const object of objects) {
    const rules = object.kind === 'ClusterRole' ? aggregated.get(object.metadata.name!) : undefined;
    rbac.apply({ type: 'ADDED', object: rules ? { ...object, rules } : object });
  }
  return rbac;
}

test('bootstrap objects carry the rbac-defaults label and autoupdate annotation', () => {
  const policy = bootstrapPolicy();
  const names = policy.map((o) => `${o.kind}/${o.metadata.name}`);
  for (const name of ['cluster-admin', 'admin', 'edit', 'view', 'system:basic-user', 'system:discovery', 'system:public-info-viewer']) {
    assert.ok(names.includes(`ClusterRole/${name}`), name);
  }
  for (const object of policy) {
    assert.equal(object.metadata.labels?.['kubernetes.io/bootstrapping'], 'rbac-defaults');
    assert.equal(object.metadata.annotations?.['rbac.authorization.kubernetes.io/autoupdate'], 'true');
  }
  const masters = policy.find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'cluster-admin') as ClusterRoleBinding;
  assert.deepEqual(masters.subjects, [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:masters' }]);
});

test('what the bootstrap policy allows: one row per case', () => {
  const rbac = bootstrapped([roleBinding('team', 'jane-views', 'ClusterRole', 'view', [userSubject('jane')]), roleBinding('team', 'ed-edits', 'ClusterRole', 'edit', [userSubject('ed')]), roleBinding('team', 'al-admins', 'ClusterRole', 'admin', [userSubject('al')])]);
  const authorizer = buildAuthorizer(['RBAC'], rbac);
  const authed = (name: string) => user(name, 'system:authenticated');
  const anonymous = user('system:anonymous', 'system:unauthenticated');
  const rows: Array<[string, ReturnType<typeof resource>, boolean]> = [
    ['anyone authenticated reads discovery', nonResource(authed('x'), 'get', '/apis/apps/v1'), true],
    ['anonymous reads /version', nonResource(anonymous, 'get', '/version'), true],
    ['anonymous does not read discovery', nonResource(anonymous, 'get', '/api'), false],
    ['authenticated users create SSAR', resource(authed('x'), 'create', '', 'authorization.k8s.io', 'selfsubjectaccessreviews'), true],
    ['authenticated users create SelfSubjectReview', resource(authed('x'), 'create', '', 'authentication.k8s.io', 'selfsubjectreviews'), true],
    ['view reads configmaps', resource(authed('jane'), 'get', 'team', '', 'configmaps', 'c'), true],
    ['view does not read secrets', resource(authed('jane'), 'get', 'team', '', 'secrets', 's'), false],
    ['view reads pods/log', resource(authed('jane'), 'get', 'team', '', 'pods', 'p', 'log'), true],
    ['view does not write', resource(authed('jane'), 'create', 'team', '', 'configmaps'), false],
    ['edit writes secrets', resource(authed('ed'), 'create', 'team', '', 'secrets'), true],
    ['edit reads what view reads', resource(authed('ed'), 'list', 'team', '', 'configmaps'), true],
    ['edit does not write roles', resource(authed('ed'), 'create', 'team', 'rbac.authorization.k8s.io', 'roles'), false],
    ['admin writes roles', resource(authed('al'), 'create', 'team', 'rbac.authorization.k8s.io', 'rolebindings'), true],
    ['admin reads what view reads', resource(authed('al'), 'watch', 'team', '', 'pods'), true],
    ['admin only in its namespace', resource(authed('al'), 'create', 'other', 'rbac.authorization.k8s.io', 'rolebindings'), false],
  ];
  for (const [name, attributes, allowed] of rows) assert.equal(authorizer.authorize(attributes).decision === 'allow', allowed, name);
});

test('aggregation: union in name order, nested to a fixed point, without duplicates', () => {
  const label = { 'example.com/aggregate-to-top': 'true' };
  const roles = [
    { ...clusterRole('top', []), aggregationRule: { clusterRoleSelectors: [{ matchLabels: label }] } },
    { ...clusterRole('middle', [], label), aggregationRule: { clusterRoleSelectors: [{ matchExpressions: [{ key: 'tier', operator: 'In', values: ['low'] }] }] } },
    clusterRole('b-low', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }], { tier: 'low' }),
    clusterRole('a-low', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }, { apiGroups: [''], resources: ['pods'], verbs: ['get'] }], { tier: 'low' }),
    clusterRole('z-direct', [{ nonResourceURLs: ['/x'], verbs: ['get'] }], label),
  ];
  const result = aggregateClusterRoles(roles);
  assert.deepEqual([...result.keys()], ['middle', 'top']);
  assert.deepEqual(result.get('middle'), [
    { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
  ]);
  assert.deepEqual(result.get('top'), [...result.get('middle')!, { nonResourceURLs: ['/x'], verbs: ['get'] }]);
  assert.ok(rulesEqual(result.get('top'), [...result.get('middle')!, { nonResourceURLs: ['/x'], verbs: ['get'] }]));
});

test('label selectors: one row per case', () => {
  const labels = { a: '1', b: '2' };
  const rows: Array<[Parameters<typeof labelSelectorMatches>[0], boolean]> = [
    [{}, true],
    [{ matchLabels: { a: '1' } }, true],
    [{ matchLabels: { a: '2' } }, false],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: ['1', '3'] }] }, true],
    [{ matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, false],
    [{ matchExpressions: [{ key: 'c', operator: 'NotIn', values: ['1'] }] }, true],
    [{ matchExpressions: [{ key: 'b', operator: 'Exists' }] }, true],
    [{ matchExpressions: [{ key: 'b', operator: 'DoesNotExist' }] }, false],
  ];
  for (const [selector, want] of rows) assert.equal(labelSelectorMatches(selector, labels), want, JSON.stringify(selector));
});

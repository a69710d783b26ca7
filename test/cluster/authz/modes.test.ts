import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StartupError } from '../../../src/common/errors.js';
import { buildAuthorizer, unionAuthorizer } from '../../../src/cluster/authz/modes.js';
import { NodeGraph } from '../../../src/cluster/authz/node.js';
import { RbacIndex } from '../../../src/cluster/authz/rbac.js';
import type { Authorizer } from '../../../src/cluster/authz/types.js';
import { clusterRole, clusterRoleBinding, resource, user, userSubject } from './fixtures.js';

function rbacWithJane(): RbacIndex {
  const index = new RbacIndex();
  index.apply({ type: 'ADDED', object: clusterRole('reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]) });
  index.apply({ type: 'ADDED', object: clusterRoleBinding('jane-reads', 'reader', [userSubject('jane')]) });
  return index;
}

test('--authorization-mode chains: one row per case', () => {
  const rbac = rbacWithJane();
  const jane = resource(user('jane'), 'list', 'default', '', 'pods');
  const bob = resource(user('bob'), 'list', 'default', '', 'pods');
  const admin = resource(user('admin', 'system:masters'), 'delete', '', '', 'nodes', 'n1');
  const rows: Array<[string[], ReturnType<typeof resource>, string, string]> = [
    [['RBAC'], jane, 'allow', 'RBAC: allowed by ClusterRoleBinding "jane-reads" of ClusterRole "reader" to User "jane"'],
    [['RBAC'], bob, 'no-opinion', ''],
    [['RBAC'], admin, 'allow', ''],
    [['AlwaysAllow'], bob, 'allow', ''],
    [['AlwaysDeny'], bob, 'no-opinion', 'Everything is forbidden.'],
    [['AlwaysDeny', 'RBAC'], jane, 'allow', 'RBAC: allowed by ClusterRoleBinding "jane-reads" of ClusterRole "reader" to User "jane"'],
    [['AlwaysDeny'], admin, 'allow', ''],
    [['Node', 'RBAC'], jane, 'allow', 'RBAC: allowed by ClusterRoleBinding "jane-reads" of ClusterRole "reader" to User "jane"'],
    [['Node,RBAC'], bob, 'no-opinion', ''],
  ];
  for (const [modes, attributes, decision, reason] of rows) {
    assert.deepEqual(buildAuthorizer(modes, rbac, new NodeGraph()).authorize(attributes), { decision, reason }, `${modes} ${attributes.user.name}`);
  }
});

test('unknown, repeated or missing modes are start-up errors', () => {
  const rbac = new RbacIndex();
  const rows: Array<[string[], string]> = [
    [['RBAC', 'Webhok'], '--authorization-mode: authorization mode "Webhok" is not supported (supported: AlwaysAllow, AlwaysDeny, Node, RBAC)'],
    [['RBAC,RBAC'], '--authorization-mode: authorization mode "RBAC" is listed more than once'],
    [[], '--authorization-mode: at least one authorization mode must be given'],
    [['rbac'], '--authorization-mode: authorization mode "rbac" is not supported (supported: AlwaysAllow, AlwaysDeny, Node, RBAC)'],
  ];
  for (const [modes, message] of rows) assert.throws(() => buildAuthorizer(modes, rbac, new NodeGraph()), (e: unknown) => e instanceof StartupError && e.message === message, message);
});

test('union: the first allow or deny decides; no opinion joins reasons with newlines', () => {
  const fixed = (decision: 'allow' | 'deny' | 'no-opinion', reason: string): Authorizer => ({ authorize: () => ({ decision, reason }) });
  const attributes = resource(user('x'), 'get', '', '', 'nodes');
  assert.deepEqual(unionAuthorizer([fixed('no-opinion', 'a'), fixed('deny', 'no'), fixed('allow', 'yes')]).authorize(attributes), { decision: 'deny', reason: 'no' });
  assert.deepEqual(unionAuthorizer([fixed('no-opinion', 'a'), fixed('no-opinion', ''), fixed('no-opinion', 'b')]).authorize(attributes), { decision: 'no-opinion', reason: 'a\nb' });
});

test('rule resolution follows the modes (kubectl auth can-i --list)', () => {
  const rbac = rbacWithJane();
  assert.deepEqual(buildAuthorizer(['RBAC'], rbac).rulesFor(user('jane'), 'default'), {
    resourceRules: [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }],
    nonResourceRules: [],
    incomplete: false,
  });
  assert.deepEqual(buildAuthorizer(['AlwaysAllow'], rbac).rulesFor(user('bob'), 'default'), {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  });
  assert.deepEqual(buildAuthorizer(['AlwaysDeny'], rbac).rulesFor(user('jane'), 'default'), { resourceRules: [], nonResourceRules: [], incomplete: false });
});

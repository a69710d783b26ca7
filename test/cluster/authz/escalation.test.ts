import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkEscalation, RoleRefNotFoundError } from '../../../src/cluster/authz/escalation.js';
import { buildAuthorizer } from '../../../src/cluster/authz/modes.js';
import { RbacIndex } from '../../../src/cluster/authz/rbac.js';
import { bootstrapPolicy } from '../../../src/cluster/authz/bootstrap.js';
import { ForbiddenError } from '../../../src/cluster/authz/types.js';
import { clusterRole, clusterRoleBinding, role, roleBinding, user, userSubject } from './fixtures.js';

function setup() {
  const rbac = new RbacIndex();
  for (const object of [
    ...bootstrapPolicy(),
    role('default', 'pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'watch', 'list'] }]),
    roleBinding('default', 'read-pods', 'Role', 'pod-reader', [userSubject('jane')]),
    // jane may write roles and bindings in "default" (not with `*`, which includes escalate and bind)
    role('default', 'rbac-editor', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['create', 'update', 'patch', 'delete', 'get', 'list'] }]),
    roleBinding('default', 'jane-edits-rbac', 'Role', 'rbac-editor', [userSubject('jane')]),
    role('default', 'pod-deleter', [{ apiGroups: [''], resources: ['pods'], verbs: ['delete'] }]),
    clusterRole('binder', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['edit'] }]),
    roleBinding('default', 'bob-binds-edit', 'ClusterRole', 'binder', [userSubject('bob')]),
    clusterRole('escalator', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['escalate'] }]),
    roleBinding('default', 'eve-escalates', 'ClusterRole', 'escalator', [userSubject('eve')]),
    clusterRole('rbac-star', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['*'] }]),
    roleBinding('default', 'kim-star', 'ClusterRole', 'rbac-star', [userSubject('kim')]),
    roleBinding('default', 'dan-ghost', 'Role', 'ghost', [userSubject('dan')]),
  ]) {
    rbac.apply({ type: 'ADDED', object });
  }
  return { rbac, authorizer: buildAuthorizer(['RBAC'], rbac) };
}

const jane = user('jane', 'devs', 'system:authenticated');

function forbiddenWith(message: string) {
  return (error: unknown) => {
    assert.ok(error instanceof ForbiddenError, String(error));
    assert.equal(error.message, message);
    return true;
  };
}

test('jane cannot bind cluster-admin: the exact message', () => {
  const { rbac, authorizer } = setup();
  const binding = roleBinding('default', 'jane-admin', 'ClusterRole', 'cluster-admin', [userSubject('jane')]);
  assert.throws(
    () => checkEscalation(jane, binding, authorizer, rbac),
    forbiddenWith(
      'rolebindings.rbac.authorization.k8s.io "jane-admin" is forbidden: user "jane" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n{NonResourceURLs:["*"], Verbs:["*"]}',
    ),
  );
});

test('escalation rows: who may write which RBAC object', () => {
  const { rbac, authorizer } = setup();
  const deleteRole = role('default', 'deleter', [{ apiGroups: [''], resources: ['pods'], verbs: ['delete', 'get'] }]);
  const rows: Array<[string, ReturnType<typeof user>, object, string | null]> = [
    ['`*` verbs include escalate', user('kim'), deleteRole, null],
    ['a Role within what she holds', jane, role('default', 'r', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }]), null],
    [
      'a Role granting more than she holds',
      jane,
      deleteRole,
      'roles.rbac.authorization.k8s.io "deleter" is forbidden: user "jane" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
    ],
    ['escalate verb allows it', user('eve'), deleteRole, null],
    ['system:masters may do anything', user('root', 'system:masters'), deleteRole, null],
    ['binding a role she holds', jane, roleBinding('default', 'b', 'Role', 'pod-reader', [userSubject('kim')]), null],
    [
      'binding a role she does not hold',
      jane,
      roleBinding('default', 'b', 'Role', 'pod-deleter', [userSubject('kim')]),
      'rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "jane" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
    ],
    ['bind verb on that role name', user('bob'), roleBinding('default', 'b', 'ClusterRole', 'edit', [userSubject('kim')]), null],
    [
      'bind on another name does not help',
      user('bob'),
      roleBinding('default', 'b', 'ClusterRole', 'system:basic-user', [userSubject('kim')]),
      'rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "bob" (groups=[]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:["authentication.k8s.io"], Resources:["selfsubjectreviews"], Verbs:["create"]}\n' +
        '{APIGroups:["authorization.k8s.io"], Resources:["selfsubjectaccessreviews"], Verbs:["create"]}\n' +
        '{APIGroups:["authorization.k8s.io"], Resources:["selfsubjectrulesreviews"], Verbs:["create"]}',
    ],
    [
      'ClusterRoleBinding to cluster-admin',
      jane,
      clusterRoleBinding('crb', 'cluster-admin', [userSubject('jane')]),
      'clusterrolebindings.rbac.authorization.k8s.io "crb" is forbidden: user "jane" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n{NonResourceURLs:["*"], Verbs:["*"]}',
    ],
    [
      'an aggregationRule needs cluster-admin',
      jane,
      { ...clusterRole('agg', []), aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] } },
      'clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule',
    ],
    [
      'resolution errors are appended',
      user('dan'),
      role('default', 'r', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]),
      'roles.rbac.authorization.k8s.io "r" is forbidden: user "dan" (groups=[]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["get"]}; resolution errors: [role.rbac.authorization.k8s.io "ghost" not found]',
    ],
    ['other kinds pass', jane, { kind: 'ConfigMap', metadata: { name: 'x' } }, null],
  ];
  for (const [name, who, object, message] of rows) {
    if (message === null) assert.doesNotThrow(() => checkEscalation(who, object, authorizer, rbac), name);
    else assert.throws(() => checkEscalation(who, object, authorizer, rbac), forbiddenWith(message), name);
  }
});

test('a binding to a missing role is NotFound, with the singular resource', () => {
  const { rbac, authorizer } = setup();
  assert.throws(
    () => checkEscalation(jane, roleBinding('default', 'b', 'ClusterRole', 'nope', [userSubject('x')]), authorizer, rbac),
    (e: unknown) => e instanceof RoleRefNotFoundError && e.message === 'clusterrole.rbac.authorization.k8s.io "nope" not found',
  );
});

test('an update that only changes ownerReferences or finalizers is exempt', () => {
  const { rbac, authorizer } = setup();
  const old = roleBinding('default', 'b', 'Role', 'pod-deleter', [userSubject('kim')]);
  const updated = { ...old, metadata: { ...old.metadata, finalizers: ['x'], resourceVersion: '9' } };
  assert.doesNotThrow(() => checkEscalation(jane, updated, authorizer, rbac, old));
  const widened = { ...updated, subjects: [userSubject('kim'), userSubject('lee')] };
  assert.throws(() => checkEscalation(jane, widened, authorizer, rbac, old), ForbiddenError);
});

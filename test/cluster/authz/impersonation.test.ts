import { test } from 'node:test';
import assert from 'node:assert/strict';
import { impersonate, ImpersonationRequestError } from '../../../src/cluster/authz/impersonation.js';
import { buildAuthorizer } from '../../../src/cluster/authz/modes.js';
import { RbacIndex } from '../../../src/cluster/authz/rbac.js';
import { ForbiddenError } from '../../../src/cluster/authz/types.js';
import { clusterRole, clusterRoleBinding, role, roleBinding, user, userSubject } from './fixtures.js';

function authorizer() {
  const rbac = new RbacIndex();
  for (const object of [
    clusterRole('impersonate-jane', [
      { apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['jane', 'system:anonymous'] },
      { apiGroups: [''], resources: ['groups'], verbs: ['impersonate'], resourceNames: ['devs'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['uids'], verbs: ['impersonate'], resourceNames: ['u-1'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['userextras/scopes'], verbs: ['impersonate'] },
    ]),
    clusterRoleBinding('bob-impersonates', 'impersonate-jane', [userSubject('bob')]),
    role('ci', 'impersonate-sa', [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'], resourceNames: ['builder'] }]),
    roleBinding('ci', 'bob-impersonates-sa', 'Role', 'impersonate-sa', [userSubject('bob')]),
  ]) {
    rbac.apply({ type: 'ADDED', object });
  }
  return buildAuthorizer(['RBAC'], rbac);
}

const bob = user('bob', 'system:authenticated');

test('impersonated users: one row per case', () => {
  const authz = authorizer();
  const rows: Array<[string, Record<string, string | string[]>, object | null]> = [
    ['no headers', { accept: 'application/json' }, null],
    ['a user gets system:authenticated', { 'impersonate-user': ['jane'] }, { name: 'jane', groups: ['system:authenticated'] }],
    ['repeated groups stay separate', { 'impersonate-user': ['jane'], 'impersonate-group': ['devs', 'devs'] }, { name: 'jane', groups: ['devs', 'devs', 'system:authenticated'] }],
    ['uid and extras', { 'impersonate-user': ['jane'], 'impersonate-uid': ['u-1'], 'impersonate-extra-scopes': ['view', 'edit'] }, { name: 'jane', uid: 'u-1', groups: ['system:authenticated'], extra: { scopes: ['view', 'edit'] } }],
    ['a service account gets its groups', { 'impersonate-user': ['system:serviceaccount:ci:builder'] }, { name: 'system:serviceaccount:ci:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:ci', 'system:authenticated'] }],
    ['anonymous gets system:unauthenticated', { 'impersonate-user': ['system:anonymous'] }, { name: 'system:anonymous', groups: ['system:unauthenticated'] }],
  ];
  for (const [name, headers, want] of rows) assert.deepEqual(impersonate(bob, headers, authz), want, name);
});

test('forbidden impersonation: the exact messages', () => {
  const authz = authorizer();
  const rows: Array<[ReturnType<typeof user>, Record<string, string[]>, string]> = [
    [user('eve'), { 'impersonate-user': ['jane'] }, 'users "jane" is forbidden: User "eve" cannot impersonate resource "users" in API group "" at the cluster scope'],
    [bob, { 'impersonate-user': ['admin'] }, 'users "admin" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope'],
    [bob, { 'impersonate-user': ['jane'], 'impersonate-group': ['devs', 'system:masters'] }, 'groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope'],
    [bob, { 'impersonate-user': ['jane'], 'impersonate-uid': ['u-2'] }, 'uids.authentication.k8s.io "u-2" is forbidden: User "bob" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope'],
    [bob, { 'impersonate-user': ['jane'], 'impersonate-extra-reason': ['x'] }, 'userextras.authentication.k8s.io "x" is forbidden: User "bob" cannot impersonate resource "userextras/reason" in API group "authentication.k8s.io" at the cluster scope'],
    [bob, { 'impersonate-user': ['system:serviceaccount:prod:deployer'] }, 'serviceaccounts "deployer" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "prod"'],
  ];
  for (const [who, headers, message] of rows) {
    assert.throws(() => impersonate(who, headers, authz), (e: unknown) => e instanceof ForbiddenError && e.message === message, message);
  }
});

test('groups without a user are a request error', () => {
  assert.throws(
    () => impersonate(bob, { 'impersonate-group': ['devs'] }, authorizer()),
    (e: unknown) => e instanceof ImpersonationRequestError && e.message === 'requested [{Group  devs    }] without impersonating a user',
  );
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildAuthorizer } from '../../../src/cluster/authz/modes.js';
import { RbacIndex } from '../../../src/cluster/authz/rbac.js';
import {
  BadReviewRequestError,
  InvalidReviewError,
  reviewLocalSubjectAccess,
  reviewSelfSubjectAccess,
  reviewSelfSubjectRules,
  reviewSubjectAccess,
  reviewToken,
  selfSubjectReview,
} from '../../../src/cluster/authz/review.js';
import { AuthenticationError, type Authenticator } from '../../../src/cluster/authn/types.js';
import { role, roleBinding, user, userSubject, groupSubject } from './fixtures.js';

function chain() {
  const rbac = new RbacIndex();
  rbac.apply({ type: 'ADDED', object: role('default', 'pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'watch', 'list'] }]) });
  rbac.apply({ type: 'ADDED', object: roleBinding('default', 'read-pods', 'Role', 'pod-reader', [userSubject('jane'), groupSubject('readers')]) });
  rbac.apply({ type: 'ADDED', object: roleBinding('default', 'broken', 'Role', 'missing', [userSubject('dan')]) });
  return buildAuthorizer(['RBAC'], rbac);
}

const jane = user('jane', 'system:authenticated');
const ssar = (resourceAttributes: object) => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes } });

test('SelfSubjectAccessReview answers through the authorizer', () => {
  const authz = chain();
  assert.deepEqual(reviewSelfSubjectAccess(jane, ssar({ namespace: 'default', verb: 'list', resource: 'pods' }), authz), {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: { resourceAttributes: { namespace: 'default', verb: 'list', resource: 'pods' } },
    status: { allowed: true, reason: 'RBAC: allowed by RoleBinding "read-pods/default" of Role "pod-reader" to User "jane"' },
  });
  // G7: a plain miss has no reason, so kubectl prints a bare "no".
  assert.deepEqual((reviewSelfSubjectAccess(jane, ssar({ namespace: 'default', verb: 'delete', resource: 'pods' }), authz) as { status: object }).status, { allowed: false });
  // G11: client-node sends no apiVersion/kind.
  const bare = reviewSelfSubjectAccess(jane, { spec: { nonResourceAttributes: { path: '/healthz', verb: 'get' } } }, authz) as Record<string, unknown>;
  assert.equal(bare['apiVersion'], 'authorization.k8s.io/v1');
  assert.deepEqual(bare['status'], { allowed: false });
  assert.deepEqual((reviewSelfSubjectAccess(user('dan'), ssar({ namespace: 'default', verb: 'get', resource: 'pods' }), authz) as { status: object }).status, {
    allowed: false,
    reason: 'RBAC: role.rbac.authorization.k8s.io "missing" not found',
  });
});

test('review validation: the exact 422 and 400 messages', () => {
  const authz = chain();
  const rows: Array<[() => unknown, string]> = [
    [() => reviewSelfSubjectAccess(jane, { spec: {} }, authz), 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified'],
    [() => reviewSubjectAccess({ spec: { resourceAttributes: { verb: 'get' } } }, authz), 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified'],
    [() => reviewSubjectAccess({ spec: {} }, authz), 'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]'],
    [() => reviewSubjectAccess({ spec: { user: 'x', resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/a', verb: 'get' } } }, authz), 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/a", Verb:"get"}: cannot be specified in combination with resourceAttributes'],
  ];
  for (const [call, message] of rows) assert.throws(call, (e: unknown) => e instanceof InvalidReviewError && e.message === message, message);
  assert.throws(
    () => reviewLocalSubjectAccess('default', { spec: { user: 'jane', resourceAttributes: { namespace: 'other', verb: 'get', resource: 'pods' } } }, authz),
    (e: unknown) => e instanceof BadReviewRequestError && e.message === 'spec.resourceAttributes.namespace must match namespace: default',
  );
  assert.throws(() => reviewSelfSubjectRules(jane, { spec: {} }, authz), (e: unknown) => e instanceof BadReviewRequestError && e.message === 'no namespace on request');
});

test('SubjectAccessReview and LocalSubjectAccessReview ask about another user (v1beta1 `group`)', () => {
  const authz = chain();
  const sar = reviewSubjectAccess({ apiVersion: 'authorization.k8s.io/v1beta1', kind: 'SubjectAccessReview', spec: { user: 'kim', group: ['readers'], resourceAttributes: { namespace: 'default', verb: 'watch', resource: 'pods' } } }, authz) as { apiVersion: string; status: object };
  assert.equal(sar.apiVersion, 'authorization.k8s.io/v1beta1');
  assert.deepEqual(sar.status, { allowed: true, reason: 'RBAC: allowed by RoleBinding "read-pods/default" of Role "pod-reader" to Group "readers"' });
  const local = reviewLocalSubjectAccess('default', { spec: { user: 'kim', groups: [], resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods' } } }, authz) as { metadata: object; status: object };
  assert.deepEqual(local.metadata, { creationTimestamp: null, namespace: 'default' });
  assert.deepEqual(local.status, { allowed: false });
});

test('SelfSubjectRulesReview lists resource and non-resource rules', () => {
  const review = reviewSelfSubjectRules(jane, { spec: { namespace: 'default' } }, chain()) as { status: object };
  assert.deepEqual(review.status, {
    resourceRules: [{ verbs: ['get', 'watch', 'list'], apiGroups: [''], resources: ['pods'] }],
    nonResourceRules: [],
    incomplete: false,
  });
});

test('TokenReview and SelfSubjectReview shapes', async () => {
  const authenticator: Authenticator = {
    async authenticate(request) {
      const header = String(request.headers.authorization);
      if (header === 'Bearer good') return { user: { name: 'jane', uid: '42', groups: ['devs', 'system:authenticated'] } };
      throw new AuthenticationError('invalid bearer token');
    },
  };
  assert.deepEqual((await reviewToken({ spec: { token: 'good' } }, authenticator)) as object, {
    kind: 'TokenReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: { token: 'good' },
    status: { authenticated: true, user: { username: 'jane', uid: '42', groups: ['devs', 'system:authenticated'] } },
  });
  assert.deepEqual(((await reviewToken({ spec: { token: 'bad' } }, authenticator)) as { status: object }).status, { authenticated: false, user: {}, error: 'invalid bearer token' });
  const anonymousOnly: Authenticator = { authenticate: async () => ({ user: { name: 'system:anonymous', groups: ['system:unauthenticated'] } }) };
  assert.deepEqual(((await reviewToken({ spec: { token: 'any' } }, anonymousOnly)) as { status: object }).status, { authenticated: false, user: {} });
  await assert.rejects(reviewToken({ spec: {} }, authenticator), (e: unknown) => e instanceof BadReviewRequestError && e.message === 'token is required for TokenReview in authentication');
  assert.deepEqual(selfSubjectReview({ name: 'jane', groups: ['system:authenticated'], extra: { k: ['v'] } }, 'authentication.k8s.io/v1beta1'), {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.k8s.io/v1beta1',
    metadata: { creationTimestamp: null },
    status: { userInfo: { username: 'jane', groups: ['system:authenticated'], extra: { k: ['v'] } } },
  });
});

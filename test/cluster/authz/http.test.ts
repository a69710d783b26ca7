// Authentication and authorization through the real server over HTTPS (M's harness): the exact
// 401/403 Status bodies, x509 admin and foreign certificates, escalation prevention, aggregation,
// service-account tokens over their whole life, the review APIs and impersonation headers.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CertificateAuthority } from '../../../src/common/tls.js';
import { adminCertificate, clusterCa } from '../../../src/cluster/pki.js';
import { startTestCluster, type TestCluster } from '../harness.js';
import { send as call, type Answer as HttpAnswer } from './https.js';

const rbac = '/apis/rbac.authorization.k8s.io/v1';

async function eventually(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const forbiddenStatus = (message: string, details: object) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Forbidden', details, code: 403 });
const unauthorized = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };

describe('cluster authn/authz over HTTPS', () => {
  let cluster: TestCluster;
  let admin: { cert: string; key: string };
  const asAdmin = (method: string, path: string, body?: unknown, headers?: Record<string, string | string[]>) => call(cluster, method, path, { cert: admin, body, ...(headers ? { headers } : {}) });
  const jane = { token: 'jane-token' };
  const bob = { token: 'bob-token' };
  const created = (answer: HttpAnswer) => assert.equal(answer.status, 201, answer.text);

  before(async () => {
    cluster = await startTestCluster();
    admin = await adminCertificate(await clusterCa(cluster.dir));
    created(await asAdmin('POST', `${rbac}/namespaces/default/roles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'watch', 'list'] }] }));
    created(await asAdmin('POST', `${rbac}/namespaces/default/rolebindings`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'read-pods' }, subjects: [{ kind: 'User', name: 'jane', apiGroup: 'rbac.authorization.k8s.io' }], roleRef: { kind: 'Role', name: 'pod-reader', apiGroup: 'rbac.authorization.k8s.io' } }));
    await eventually(async () => (await call(cluster, 'GET', '/api/v1/namespaces/default/pods', jane)).status === 200, 'the seed binding to take effect');
  });
  after(async () => cluster?.close());

  test('credentials: bad ones are 401 with the exact Status, none is anonymous', async () => {
    assert.deepEqual((await call(cluster, 'GET', '/api/v1/namespaces/default/pods', { token: 'nope' })).json(), unauthorized);
    assert.deepEqual((await call(cluster, 'GET', '/api/v1/namespaces/default/pods', { basic: ['jane', 'wrong'] })).json(), unauthorized);
    const foreign = await (await CertificateAuthority.create('foreign')).issueClient({ commonName: 'mallory', organizations: ['system:masters'] });
    const forged = await call(cluster, 'GET', '/api/v1/namespaces', { cert: foreign });
    assert.equal(forged.status, 401);
    assert.deepEqual(forged.json(), unauthorized);
    assert.equal((await call(cluster, 'GET', '/version')).status, 200);
    const anonymous = await call(cluster, 'GET', '/api/v1/namespaces/default/pods');
    assert.deepEqual(anonymous.json(), forbiddenStatus('pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"', { kind: 'pods' }));
    assert.equal((await call(cluster, 'GET', '/api/v1/namespaces/default/pods', { basic: ['jane', 'jane-password'] })).status, 200);
    assert.equal((await asAdmin('GET', '/api/v1/namespaces')).status, 200);
  });

  test('403 bodies: namespaced, named, cluster-scoped, non-resource', async () => {
    const rows: Array<[string, { token: string }, object]> = [
      ['/api/v1/namespaces/default/pods', bob, forbiddenStatus('pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"', { kind: 'pods' })],
      ['/api/v1/namespaces/default/secrets/s1', jane, forbiddenStatus('secrets "s1" is forbidden: User "jane" cannot get resource "secrets" in API group "" in the namespace "default"', { name: 's1', kind: 'secrets' })],
      [`${rbac}/clusterroles`, jane, forbiddenStatus('clusterroles.rbac.authorization.k8s.io is forbidden: User "jane" cannot list resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope', { group: 'rbac.authorization.k8s.io', kind: 'clusterroles' })],
      ['/api/v1/namespaces/kube-system/pods/p/log', jane, forbiddenStatus('pods "p" is forbidden: User "jane" cannot get resource "pods/log" in API group "" in the namespace "kube-system"', { name: 'p', kind: 'pods' })],
    ];
    for (const [path, who, body] of rows) {
      const answer = await call(cluster, 'GET', path, who);
      assert.equal(answer.status, 403, path);
      assert.deepEqual(answer.json(), body, path);
    }
    const metrics = await call(cluster, 'GET', '/metrics', bob);
    assert.equal(metrics.status, 403);
    assert.equal(metrics.json().message, 'forbidden: User "bob" cannot get path "/metrics"');
  });

  test('escalation: jane may write only the RBAC she holds', async () => {
    created(await asAdmin('POST', `${rbac}/namespaces/default/roles`, { kind: 'Role', metadata: { name: 'rbac-writer' }, rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['create', 'get', 'list'] }] }));
    created(await asAdmin('POST', `${rbac}/namespaces/default/rolebindings`, { kind: 'RoleBinding', metadata: { name: 'jane-writes-rbac' }, subjects: [{ kind: 'User', name: 'jane' }], roleRef: { kind: 'Role', name: 'rbac-writer', apiGroup: 'rbac.authorization.k8s.io' } }));
    await eventually(async () => (await call(cluster, 'GET', `${rbac}/namespaces/default/roles`, jane)).status === 200, 'rbac-writer to take effect');

    const wider = await call(cluster, 'POST', `${rbac}/namespaces/default/roles`, { ...jane, body: { kind: 'Role', metadata: { name: 'deleter' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete'] }] } });
    assert.deepEqual(
      wider.json(),
      forbiddenStatus('roles.rbac.authorization.k8s.io "deleter" is forbidden: user "jane" (groups=["devs" "qa" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}', { name: 'deleter', group: 'rbac.authorization.k8s.io', kind: 'roles' }),
    );
    assert.equal((await asAdmin('GET', `${rbac}/namespaces/default/roles/deleter`)).status, 404);

    const admin = await call(cluster, 'POST', `${rbac}/namespaces/default/rolebindings`, { ...jane, body: { kind: 'RoleBinding', metadata: { name: 'jane-admin' }, subjects: [{ kind: 'User', name: 'jane' }], roleRef: { kind: 'ClusterRole', name: 'cluster-admin', apiGroup: 'rbac.authorization.k8s.io' } } });
    assert.equal(admin.status, 403);
    assert.equal(admin.json().message, 'rolebindings.rbac.authorization.k8s.io "jane-admin" is forbidden: user "jane" (groups=["devs" "qa" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n{NonResourceURLs:["*"], Verbs:["*"]}');

    created(await call(cluster, 'POST', `${rbac}/namespaces/default/roles`, { ...jane, body: { kind: 'Role', metadata: { name: 'lister' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }] } }));
    created(await call(cluster, 'POST', `${rbac}/namespaces/default/rolebindings`, { ...jane, body: { kind: 'RoleBinding', metadata: { name: 'bob-lists' }, subjects: [{ kind: 'User', name: 'bob' }], roleRef: { kind: 'Role', name: 'lister', apiGroup: 'rbac.authorization.k8s.io' } } }));
    await eventually(async () => (await call(cluster, 'GET', '/api/v1/namespaces/default/pods', bob)).status === 200, 'bob to be able to list pods');
    assert.equal((await call(cluster, 'GET', '/api/v1/namespaces/default/pods/x', bob)).status, 403);
  });

  test('aggregation: a ClusterRole labelled aggregate-to-view widens view, edit and admin', async () => {
    const rule = { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] };
    created(await asAdmin('POST', `${rbac}/clusterroles`, { kind: 'ClusterRole', metadata: { name: 'widget-viewer', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [rule] }));
    for (const name of ['view', 'edit', 'admin']) {
      await eventually(async () => JSON.stringify((await asAdmin('GET', `${rbac}/clusterroles/${name}`)).json().rules ?? []).includes('"widgets"'), `${name} to aggregate widgets`);
    }
    const view = (await asAdmin('GET', `${rbac}/clusterroles/view`)).json();
    assert.deepEqual(view.metadata.labels, { 'kubernetes.io/bootstrapping': 'rbac-defaults', 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' });
    assert.ok(!JSON.stringify(view.rules).includes('"secrets"'), 'view never reads secrets');
  });

  test('service-account tokens: issued, accepted, reviewed, and dead once the account is deleted', async () => {
    created(await asAdmin('POST', '/api/v1/namespaces/default/serviceaccounts', { kind: 'ServiceAccount', metadata: { name: 'builder' } }));
    const request = await asAdmin('POST', '/api/v1/namespaces/default/serviceaccounts/builder/token', { kind: 'TokenRequest', apiVersion: 'authentication.k8s.io/v1', spec: { expirationSeconds: 600 } });
    created(request);
    const token = request.json().status.token as string;
    const who = await call(cluster, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { token, body: { kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1' } });
    created(who);
    const userInfo = who.json().status.userInfo;
    assert.equal(userInfo.username, 'system:serviceaccount:default:builder');
    assert.deepEqual(userInfo.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);

    const review = await asAdmin('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { kind: 'TokenReview', apiVersion: 'authentication.k8s.io/v1', spec: { token } });
    created(review);
    assert.equal(review.json().status.authenticated, true);
    assert.equal(review.json().status.user.username, 'system:serviceaccount:default:builder');
    const wrongAudience = await asAdmin('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token, audiences: ['vault'] } });
    assert.deepEqual(wrongAudience.json().status, { authenticated: false, user: {}, error: 'token audiences ["https://kubernetes.default.svc.cluster.local"] is invalid for the target audiences ["vault"]' });

    assert.equal((await asAdmin('DELETE', '/api/v1/namespaces/default/serviceaccounts/builder')).status, 200);
    await eventually(async () => (await call(cluster, 'GET', '/version', { token })).status === 401, 'the deleted account\'s token to stop working');
    assert.deepEqual((await call(cluster, 'GET', '/api/v1/namespaces', { token })).json(), unauthorized);
    const dead = await asAdmin('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token } });
    assert.equal(dead.json().status.authenticated, false);
    assert.match(dead.json().status.error, /^service account default\/builder \(uid [\w-]+\) no longer exists$/);
  });

  test('review APIs answer through the same authorizer', async () => {
    const ssar = await call(cluster, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { ...jane, body: { spec: { resourceAttributes: { namespace: 'default', verb: 'watch', resource: 'pods' } } } });
    created(ssar);
    assert.deepEqual(ssar.json().status, { allowed: true, reason: 'RBAC: allowed by RoleBinding "read-pods/default" of Role "pod-reader" to User "jane"' });
    const denied = await call(cluster, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { ...bob, body: { spec: { resourceAttributes: { namespace: 'default', verb: 'delete', resource: 'pods' } } } });
    assert.deepEqual(denied.json().status, { allowed: false });

    const sar = await asAdmin('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { spec: { user: 'jane', groups: ['devs'], resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods', name: 'p' } } });
    created(sar);
    assert.equal(sar.json().status.allowed, true);
    const invalid = await asAdmin('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { spec: { resourceAttributes: { verb: 'get' } } });
    assert.equal(invalid.status, 422);
    assert.equal(invalid.json().message, 'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified');
    // jane may not ask about others.
    assert.equal((await call(cluster, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { ...jane, body: { spec: { user: 'bob', resourceAttributes: { verb: 'get' } } } })).status, 403);

    const rules = await call(cluster, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { ...jane, body: { spec: { namespace: 'default' } } });
    created(rules);
    assert.ok(rules.json().status.resourceRules.some((r: { resources: string[]; verbs: string[] }) => r.resources.includes('pods') && r.verbs.join() === 'get,watch,list'));
    assert.ok(rules.json().status.nonResourceRules.some((r: { nonResourceURLs: string[] }) => r.nonResourceURLs.includes('/version')));
    assert.equal(rules.json().status.incomplete, false);
  });

  test('Node authorization: a kubelet certificate reads only what its pods reference', async () => {
    const kubelet = await (await clusterCa(cluster.dir)).issueClient({ commonName: 'system:node:n1', organizations: ['system:nodes'] });
    for (const name of ['web-tls', 'other']) created(await asAdmin('POST', '/api/v1/namespaces/default/secrets', { kind: 'Secret', metadata: { name }, data: { k: 'dg==' } }));
    created(await asAdmin('POST', '/api/v1/namespaces/default/pods', { kind: 'Pod', metadata: { name: 'web' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }], volumes: [{ name: 'tls', secret: { secretName: 'web-tls' } }] } }));
    await eventually(async () => (await call(cluster, 'GET', '/api/v1/namespaces/default/secrets/web-tls', { cert: kubelet })).status === 200, 'the node graph to learn about pod web');
    const other = await call(cluster, 'GET', '/api/v1/namespaces/default/secrets/other', { cert: kubelet });
    assert.deepEqual(
      other.json(),
      forbiddenStatus('secrets "other" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node \'n1\' and this object', { name: 'other', kind: 'secrets' }),
    );
    const n2 = await (await clusterCa(cluster.dir)).issueClient({ commonName: 'system:node:n2', organizations: ['system:nodes'] });
    assert.equal((await call(cluster, 'GET', '/api/v1/namespaces/default/secrets/web-tls', { cert: n2 })).status, 403);
    assert.equal((await call(cluster, 'GET', '/api/v1/namespaces/default/pods/web', { cert: kubelet })).status, 200);
    assert.equal((await asAdmin('DELETE', '/api/v1/namespaces/default/pods/web')).status, 200);
    await eventually(async () => (await call(cluster, 'GET', '/api/v1/namespaces/default/secrets/web-tls', { cert: kubelet })).status === 403, 'the node to lose the secret with its pod');
  });

  test('impersonation headers: repeated groups, service accounts, and the exact refusals', async () => {
    const whoami = async (headers: Record<string, string | string[]>, who?: { token: string }) =>
      who ? call(cluster, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { ...who, headers, body: {} }) : asAdmin('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {}, headers);
    const asJane = await whoami({ 'Impersonate-User': 'jane', 'Impersonate-Group': ['devs', 'qa'], 'Impersonate-Extra-Scopes': ['a', 'b'] });
    created(asJane);
    assert.deepEqual(asJane.json().status.userInfo, { username: 'jane', groups: ['devs', 'qa', 'system:authenticated'], extra: { scopes: ['a', 'b'] } });
    const asSa = await whoami({ 'Impersonate-User': 'system:serviceaccount:ci:deployer' });
    assert.deepEqual(asSa.json().status.userInfo, { username: 'system:serviceaccount:ci:deployer', groups: ['system:serviceaccounts', 'system:serviceaccounts:ci', 'system:authenticated'] });

    const refused = await whoami({ 'Impersonate-User': 'jane' }, bob);
    assert.deepEqual(refused.json(), forbiddenStatus('users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope', { name: 'jane', kind: 'users' }));
    const groupOnly = await whoami({ 'Impersonate-Group': 'devs' });
    assert.equal(groupOnly.status, 500);

    // The impersonated user is the one authorized: admin as jane cannot read secrets.
    const secrets = await call(cluster, 'GET', '/api/v1/namespaces/default/secrets', { cert: admin, headers: { 'Impersonate-User': 'jane' } });
    assert.equal(secrets.json().message, 'secrets is forbidden: User "jane" cannot list resource "secrets" in API group "" in the namespace "default"');
  });
});

// @kubernetes/client-node 1.4.0 (G10: 2.x does not load on Node 20) against the real server over
// TLS: typed clients send bodies without apiVersion/kind (G11), merge patches, server-side apply
// through KubernetesObjectApi, watches, reviews, and the exact Status of a denial.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { startTestCluster, type TestCluster } from './harness.js';

let cluster: TestCluster;
const configs: Record<string, k8s.KubeConfig> = {};

before(async () => {
  cluster = await startTestCluster();
  for (const [who, spec] of [
    ['admin', 'admin'],
    ['jane', { token: 'jane-token', user: 'jane' }],
    ['bob', { token: 'bob-token', user: 'bob' }],
  ] as const) {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(await cluster.kubeconfigFor(spec));
    configs[who] = kc;
  }
});
after(() => cluster?.close());

describe('@kubernetes/client-node 1.4.0', () => {
  test('typed CoreV1Api: create (no GVK in the body), read, list, merge patch, delete', async () => {
    const core = configs.admin!.makeApiClient(k8s.CoreV1Api);
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'from-client-node', labels: { app: 'cn' } }, data: { a: '1' } } });
    assert.equal(created.metadata?.name, 'from-client-node');
    assert.ok(created.metadata?.uid);
    const read = await core.readNamespacedConfigMap({ name: 'from-client-node', namespace: 'default' });
    assert.deepEqual(read.data, { a: '1' });
    const list = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'app=cn' });
    assert.deepEqual(list.items.map((i) => i.metadata?.name), ['from-client-node']);
    const patched = await core.patchNamespacedConfigMap(
      { name: 'from-client-node', namespace: 'default', body: { data: { b: '2' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    assert.deepEqual(patched.data, { a: '1', b: '2' });
    await core.deleteNamespacedConfigMap({ name: 'from-client-node', namespace: 'default' });
    await assert.rejects(core.readNamespacedConfigMap({ name: 'from-client-node', namespace: 'default' }), (error: k8s.ApiException<string>) => {
      assert.equal(error.code, 404);
      assert.equal(JSON.parse(error.body).message, 'configmaps "from-client-node" not found');
      return true;
    });
  });

  test('KubernetesObjectApi: server-side apply creates, then updates', async () => {
    const objects = k8s.KubernetesObjectApi.makeApiClient(configs.admin!);
    const spec = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace: 'default' }, data: { x: '1' } };
    const created = await objects.patch(spec, undefined, undefined, 'client-node', true, k8s.PatchStrategy.ServerSideApply);
    assert.deepEqual((created as k8s.V1ConfigMap).data, { x: '1' });
    const updated = await objects.patch({ ...spec, data: { y: '2' } }, undefined, undefined, 'client-node', true, k8s.PatchStrategy.ServerSideApply);
    assert.deepEqual((updated as k8s.V1ConfigMap).data, { y: '2' });
    const managed = (updated as k8s.V1ConfigMap).metadata?.managedFields?.map((m) => `${m.manager}/${m.operation}`);
    assert.deepEqual(managed, ['client-node/Apply']);
  });

  test('Watch delivers ADDED for a new pod', async () => {
    const core = configs.admin!.makeApiClient(k8s.CoreV1Api);
    const events: Array<[string, string]> = [];
    let resolveSeen!: () => void;
    const seen = new Promise<void>((r) => (resolveSeen = r));
    const watch = new k8s.Watch(configs.admin!);
    const controller = await watch.watch(
      '/api/v1/namespaces/default/pods',
      { allowWatchBookmarks: true },
      (phase, object: k8s.V1Pod) => {
        events.push([phase, object.metadata?.name ?? '']);
        if (object.metadata?.name === 'watched-cn') resolveSeen();
      },
      () => undefined,
    );
    try {
      await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'watched-cn' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } });
      await Promise.race([seen, new Promise((_, reject) => setTimeout(() => reject(new Error(`no event: ${JSON.stringify(events)}`)), 10_000))]);
      assert.deepEqual(events.find(([, name]) => name === 'watched-cn'), ['ADDED', 'watched-cn']);
    } finally {
      controller.abort();
      await core.deleteNamespacedPod({ name: 'watched-cn', namespace: 'default' });
    }
  });

  test('SelfSubjectAccessReview and SelfSubjectReview for a token user', async () => {
    const authz = configs.jane!.makeApiClient(k8s.AuthorizationV1Api);
    const review = await authz.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { namespace: 'default', verb: 'delete', resource: 'pods' } } } });
    assert.equal(review.status?.allowed, false);
    const authn = configs.jane!.makeApiClient(k8s.AuthenticationV1Api);
    const who = await authn.createSelfSubjectReview({ body: {} });
    assert.deepEqual({ ...who.status?.userInfo }, { username: 'jane', uid: 'u-jane', groups: ['devs', 'qa', 'system:authenticated'] });
  });

  test('a user without bindings gets the exact 403 Status', async () => {
    const core = configs.bob!.makeApiClient(k8s.CoreV1Api);
    await assert.rejects(core.listNamespacedPod({ namespace: 'default' }), (error: k8s.ApiException<string>) => {
      assert.equal(error.code, 403);
      assert.deepEqual(JSON.parse(error.body), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"',
        reason: 'Forbidden',
        details: { kind: 'pods' },
        code: 403,
      });
      return true;
    });
  });

  test('RBAC objects: create a Role and RoleBinding through RbacAuthorizationV1Api', async () => {
    const rbac = configs.admin!.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({ namespace: 'default', body: { metadata: { name: 'cm-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }] } });
    await rbac.createNamespacedRoleBinding({
      namespace: 'default',
      body: { metadata: { name: 'bob-cm' }, subjects: [{ kind: 'User', name: 'bob', apiGroup: 'rbac.authorization.k8s.io' }], roleRef: { kind: 'Role', name: 'cm-reader', apiGroup: 'rbac.authorization.k8s.io' } },
    });
    const core = configs.bob!.makeApiClient(k8s.CoreV1Api);
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await core.listNamespacedConfigMap({ namespace: 'default' });
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  });
});

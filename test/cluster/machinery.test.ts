// The pure parts of the API machinery: strategic merge patch, label/field selectors, field
// ownership and server-side apply conflicts, request attributes from URLs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyMergePatch, applyStrategicMergePatch } from '../../src/cluster/api/patch.js';
import { serverSideApply, recordUpdate } from '../../src/cluster/api/apply.js';
import { requestInfo } from '../../src/cluster/api/requestinfo.js';
import { selectorPredicate } from '../../src/cluster/registry/selectors.js';
import { defaultResourceTable } from '../../src/cluster/resources/index.js';
import { StatusError } from '../../src/cluster/errors.js';
import type { KubeObject } from '../../src/cluster/object.js';

const table = defaultResourceTable();
const pods = table.lookup('', 'v1', 'pods')!;
const configmaps = table.lookup('', 'v1', 'configmaps')!;

describe('strategic merge patch', () => {
  const live = {
    metadata: { name: 'p', finalizers: ['a'] },
    spec: { containers: [{ name: 'a', image: 'x', env: [{ name: 'E1', value: '1' }] }, { name: 'b', image: 'y' }], tolerations: [{ key: 't' }] },
  };

  test('merges keyed lists by their merge key and keeps the others', () => {
    const out = applyStrategicMergePatch(live, { spec: { containers: [{ name: 'b', image: 'z' }, { name: 'c', image: 'w' }] } }, pods.mergeKeys);
    assert.deepEqual(out.spec, { containers: [{ name: 'a', image: 'x', env: [{ name: 'E1', value: '1' }] }, { name: 'b', image: 'z' }, { name: 'c', image: 'w' }], tolerations: [{ key: 't' }] });
  });

  test('nested merge keys, $patch: delete, $setElementOrder, and set-like finalizers', () => {
    const out = applyStrategicMergePatch(
      live,
      {
        metadata: { finalizers: ['b'] },
        spec: {
          '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }],
          containers: [{ name: 'a', env: [{ name: 'E2', value: '2' }] }, { name: 'b', $patch: 'delete' }],
        },
      },
      pods.mergeKeys,
    );
    assert.deepEqual(out.metadata, { name: 'p', finalizers: ['a', 'b'] });
    assert.deepEqual((out.spec as any).containers, [{ name: 'a', image: 'x', env: [{ name: 'E1', value: '1' }, { name: 'E2', value: '2' }] }]);
  });

  test('lists without a strategy (RBAC rules) are replaced; null deletes; $retainKeys', () => {
    const role = { metadata: { name: 'r' }, rules: [{ verbs: ['get'] }, { verbs: ['list'] }] };
    assert.deepEqual(applyStrategicMergePatch(role, { rules: [{ verbs: ['watch'] }] }).rules, [{ verbs: ['watch'] }]);
    assert.deepEqual(applyStrategicMergePatch({ metadata: {}, a: 1, b: 2 }, { a: null }), { metadata: {}, b: 2 });
    assert.deepEqual(applyStrategicMergePatch({ metadata: {}, s: { x: 1, y: 2 } }, { s: { $retainKeys: ['y', 'z'], z: 3 } }), { metadata: {}, s: { y: 2, z: 3 } });
  });

  test('merge patch replaces lists and deletes with null', () => {
    assert.deepEqual(applyMergePatch({ a: [1, 2], b: { c: 1, d: 2 } }, { a: [3], b: { c: null } }), { a: [3], b: { d: 2 } });
  });
});

describe('selectors', () => {
  const object = (labels: Record<string, string>, phase = 'Pending'): KubeObject => ({ metadata: { name: 'p', namespace: 'n', labels }, status: { phase } });
  test('label selector operators', () => {
    const cases: Array<[string, Record<string, string>, boolean]> = [
      ['app=web', { app: 'web' }, true],
      ['app==web', { app: 'db' }, false],
      ['app!=web', {}, true],
      ['tier in (a, b)', { tier: 'b' }, true],
      ['tier notin (a,b)', { tier: 'b' }, false],
      ['app', { app: '' }, true],
      ['!app', { app: 'x' }, false],
      ['app=web,tier in (a)', { app: 'web', tier: 'a' }, true],
    ];
    for (const [selector, labels, expected] of cases) assert.equal(selectorPredicate(pods, selector, undefined)!(object(labels)), expected, selector);
  });

  test('field selectors use the kind\'s selectable fields', () => {
    assert.equal(selectorPredicate(pods, undefined, 'status.phase=Pending,metadata.namespace=n')!(object({})), true);
    assert.equal(selectorPredicate(pods, undefined, 'status.phase!=Pending')!(object({})), false);
    assert.throws(() => selectorPredicate(configmaps, undefined, 'status.phase=x'), (e: StatusError) => e.code === 400 && e.message === 'field label not supported: status.phase');
  });
});

describe('server-side apply', () => {
  const context = { mergeKeys: {}, apiVersion: 'v1' };
  test('conflicts with another manager that changed the field, unless forced', () => {
    const live: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1', b: '2' } };
    recordUpdate(live, undefined, 'kubectl-edit', context);
    assert.throws(
      () => serverSideApply(live, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'changed' } }, 'ci', false, context),
      (e: StatusError) => e.code === 409 && e.message === 'Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.a',
    );
    const same = serverSideApply(live, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } }, 'ci', false, context);
    assert.deepEqual(same.data, { a: '1', b: '2' });
    const forced = serverSideApply(live, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'changed' } }, 'ci', true, context);
    assert.deepEqual(forced.data, { a: 'changed', b: '2' });
    assert.deepEqual(forced.metadata.managedFields!.map((m) => [m.manager, m.operation, m.fieldsV1]), [
      ['kubectl-edit', 'Update', { 'f:data': { 'f:b': {} } }],
      ['ci', 'Apply', { 'f:data': { 'f:a': {} } }],
    ]);
  });

  test('a field the manager stops applying is removed when nobody else owns it', () => {
    const first = serverSideApply(undefined, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1', b: '2' } }, 'ci', false, context);
    const second = serverSideApply(first, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } }, 'ci', false, context);
    assert.deepEqual(second.data, { a: '1' });
  });
});

describe('request attributes from URLs', () => {
  const rows: Array<[string, string, string, Partial<ReturnType<typeof requestInfo>>]> = [
    ['GET', '/api/v1/namespaces/default/pods', '', { verb: 'list', namespace: 'default', resource: 'pods', name: '' }],
    ['GET', '/api/v1/namespaces/default/pods', 'watch=true', { verb: 'watch' }],
    ['GET', '/api/v1/namespaces/default/pods', 'watch=false', { verb: 'list' }],
    ['GET', '/api/v1/namespaces/default/pods', 'fieldSelector=metadata.name%3Dp1', { verb: 'list', name: 'p1' }],
    ['GET', '/api/v1/watch/namespaces/default/pods', '', { verb: 'watch', resource: 'pods', namespace: 'default' }],
    ['GET', '/api/v1/namespaces/default', '', { verb: 'get', resource: 'namespaces', name: 'default', namespace: 'default' }],
    ['PUT', '/api/v1/namespaces/default/finalize', '', { verb: 'update', resource: 'namespaces', subresource: 'finalize' }],
    ['POST', '/api/v1/namespaces/ns/serviceaccounts/sa/token', '', { verb: 'create', resource: 'serviceaccounts', name: 'sa', subresource: 'token' }],
    ['DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles', '', { verb: 'deletecollection', apiGroup: 'rbac.authorization.k8s.io', resource: 'clusterroles' }],
    ['PATCH', '/apis/rbac.authorization.k8s.io/v1/namespaces/n/roles/r', '', { verb: 'patch', name: 'r', namespace: 'n' }],
    ['GET', '/apis/rbac.authorization.k8s.io/v1', '', { resourceRequest: false, verb: 'get' }],
    ['GET', '/version', '', { resourceRequest: false }],
  ];
  for (const [method, path, query, expected] of rows) {
    test(`${method} ${path}${query ? `?${query}` : ''}`, () => {
      const info = requestInfo(method, path, new URLSearchParams(query));
      for (const [key, value] of Object.entries(expected)) assert.equal((info as unknown as Record<string, unknown>)[key], value, key);
    });
  }
});

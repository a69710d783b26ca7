import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forbiddenError, forbiddenMessage } from '../../../src/cluster/authz/forbidden.js';
import { ForbiddenError } from '../../../src/cluster/authz/types.js';
import { nonResource, resource, user } from './fixtures.js';

test('403 messages of kube.md §3.6: one row per case', () => {
  const jane = user('jane');
  const rows: Array<[ReturnType<typeof resource>, string, string]> = [
    [resource(jane, 'list', 'default', '', 'pods'), '', 'pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"'],
    [resource(jane, 'get', 'default', '', 'pods', 'p1'), '', 'pods "p1" is forbidden: User "jane" cannot get resource "pods" in API group "" in the namespace "default"'],
    [resource(jane, 'list', '', 'rbac.authorization.k8s.io', 'roles'), '', 'roles.rbac.authorization.k8s.io is forbidden: User "jane" cannot list resource "roles" in API group "rbac.authorization.k8s.io" at the cluster scope'],
    [resource(jane, 'get', 'default', '', 'pods', 'p1', 'log'), '', 'pods "p1" is forbidden: User "jane" cannot get resource "pods/log" in API group "" in the namespace "default"'],
    [resource(jane, 'list', 'default', '', 'pods'), 'Everything is forbidden.', 'pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default": Everything is forbidden.'],
    [nonResource(jane, 'get', '/foo'), '', 'forbidden: User "jane" cannot get path "/foo"'],
    [resource(user('we"ird'), 'get', 'default', 'apps', 'deployments', 'd'), '', 'deployments.apps "d" is forbidden: User "we\\"ird" cannot get resource "deployments" in API group "apps" in the namespace "default"'],
    [resource(user('system:anonymous'), 'get', '', '', 'namespaces', 'kube-system'), 'a\nb', 'namespaces "kube-system" is forbidden: User "system:anonymous" cannot get resource "namespaces" in API group "" at the cluster scope: a\nb'],
  ];
  for (const [attributes, reason, message] of rows) assert.equal(forbiddenMessage(attributes, reason), message);
});

test('the error carries the Status details', () => {
  const error = forbiddenError(resource(user('jane'), 'get', 'default', 'apps', 'deployments', 'd'), '');
  assert.ok(error instanceof ForbiddenError);
  assert.deepEqual(error.details, { group: 'apps', resource: 'deployments', name: 'd' });
});

// Rule matching and the answer checks of the webhook dispatcher, one row per case (kube.md §6.2, §6.4).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionAttributes } from '../../../src/cluster/admission.js';
import { defaultResourceTable } from '../../../src/cluster/resources/index.js';
import { isExempt, matchRules, objectSelectorMatches, selectorMatches } from '../../../src/cluster/webhooks/matching.js';
import { CallError, readResponse } from '../../../src/cluster/webhooks/review.js';
import { compileConfiguration, type Webhook } from '../../../src/cluster/webhooks/webhook.js';

const resources = defaultResourceTable();
const type = (group: string, version: string, resource: string) => resources.lookup(group, version, resource)!;

function webhook(kind: 'validating' | 'mutating', hook: Record<string, unknown>): Webhook {
  return compileConfiguration(kind, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'X', metadata: { name: 'cfg' }, webhooks: [{ name: 'w.example.com', ...hook }] })[0]!;
}

function attributes(overrides: Partial<AdmissionAttributes> & { type: AdmissionAttributes['type'] }): AdmissionAttributes {
  return { operation: 'CREATE', version: overrides.type.versions[0]!, subresource: '', namespace: 'default', name: 'n', user: { name: 'u', groups: [] }, dryRun: false, ...overrides };
}

test('rules: operation, group, version, resource/subresource and scope, each with *', () => {
  const pods = type('', 'v1', 'pods');
  const namespaces = type('', 'v1', 'namespaces');
  const roles = type('rbac.authorization.k8s.io', 'v1', 'roles');
  const rows: Array<[string, Record<string, unknown>, Partial<AdmissionAttributes> & { type: AdmissionAttributes['type'] }, string | undefined]> = [
    ['exact pods create', { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }, { type: pods }, 'v1'],
    ['other operation', { operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }, { type: pods }, undefined],
    ['all wildcards', { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }, { type: roles, operation: 'DELETE' }, 'v1'],
    ['* excludes subresources', { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }, { type: pods, subresource: 'status', operation: 'UPDATE' }, undefined],
    ['pods/* includes them', { operations: ['*'], apiGroups: [''], apiVersions: ['*'], resources: ['pods/*'] }, { type: pods, subresource: 'status', operation: 'UPDATE' }, 'v1'],
    ['*/status', { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/status'] }, { type: pods, subresource: 'status', operation: 'UPDATE' }, 'v1'],
    // Upstream's matcher accepts any subresource for `/*`, the empty one (the pod itself) included.
    ['pods/* also the pod itself', { operations: ['*'], apiGroups: [''], apiVersions: ['*'], resources: ['pods/*'] }, { type: pods }, 'v1'],
    ['group mismatch', { operations: ['*'], apiGroups: ['apps'], apiVersions: ['*'], resources: ['*'] }, { type: pods }, undefined],
    ['Namespaced never matches namespaces', { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Namespaced' }, { type: namespaces, namespace: '' }, undefined],
    ['Cluster matches namespaces', { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Cluster' }, { type: namespaces, namespace: '' }, 'v1'],
    ['Cluster skips pods', { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Cluster' }, { type: pods }, undefined],
  ];
  for (const [name, rule, attrs, want] of rows) {
    assert.equal(matchRules(webhook('validating', { rules: [rule], matchPolicy: 'Exact' }), attributes(attrs)), want, name);
  }
});

test('matchPolicy: Exact needs the request version; Equivalent accepts another served version of the kind', () => {
  const vwc = type('admissionregistration.k8s.io', 'v1beta1', 'validatingwebhookconfigurations');
  const rule = { operations: ['*'], apiGroups: ['*'], apiVersions: ['v1'], resources: ['*'] };
  const request = attributes({ type: vwc, version: 'v1beta1', namespace: '' });
  assert.equal(matchRules(webhook('validating', { rules: [rule], matchPolicy: 'Exact' }), request), undefined);
  assert.equal(matchRules(webhook('validating', { rules: [rule], matchPolicy: 'Equivalent' }), request), 'v1');
  assert.equal(isExempt(vwc), true, 'webhook configurations are never sent to webhooks');
  assert.equal(isExempt(type('', 'v1', 'pods')), false);
});

test('selectors: empty matches all; objectSelector looks at the object or the old object', () => {
  assert.equal(selectorMatches({}, undefined), true);
  assert.equal(selectorMatches({ matchLabels: { env: 'prod' } }, { env: 'prod' }), true);
  assert.equal(selectorMatches({ matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] }, { skip: 'x' }), false);
  const hook = webhook('validating', { objectSelector: { matchLabels: { team: 'a' } } });
  const pods = type('', 'v1', 'pods');
  const labelled = (labels?: Record<string, string>) => ({ metadata: { name: 'p', labels } });
  assert.equal(objectSelectorMatches(hook, attributes({ type: pods, object: labelled({ team: 'a' }) })), true);
  assert.equal(objectSelectorMatches(hook, attributes({ type: pods, operation: 'DELETE', oldObject: labelled({ team: 'a' }) })), true);
  assert.equal(objectSelectorMatches(hook, attributes({ type: pods, object: labelled({ team: 'b' }) })), false);
  assert.equal(objectSelectorMatches(hook, attributes({ type: pods })), false, 'no object, no match');
});

test('answers are checked as upstream checks them; each failure is a calling error', () => {
  const validating = webhook('validating', {});
  const mutating = webhook('mutating', {});
  const ok = (response: Record<string, unknown>) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u1', allowed: true, ...response } });
  const patch = Buffer.from(JSON.stringify([{ op: 'add', path: '/metadata/labels', value: {} }])).toString('base64');
  const rows: Array<[string, 'v1' | 'v1beta1', unknown, Webhook, string]> = [
    ['absent response', 'v1', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, validating, 'received invalid webhook response: webhook response was absent'],
    ['uid mismatch', 'v1', ok({ uid: 'other' }), validating, 'expected response.uid="u1", got "other"'],
    ['wrong kind', 'v1', { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', response: {} }, validating, 'expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview'],
    ['validating with patch', 'v1', ok({ patch, patchType: 'JSONPatch' }), validating, 'validating webhook may not return response.patch'],
    ['patch without type', 'v1', ok({ patch }), mutating, 'webhook returned response.patch but not response.patchType'],
    ['type without patch', 'v1', ok({ patchType: 'JSONPatch' }), mutating, 'webhook returned response.patchType but not response.patch'],
    ['undecodable patch', 'v1', ok({ patch: Buffer.from('{not a list').toString('base64'), patchType: 'JSONPatch' }), mutating, 'received undecodable patch in webhook response'],
  ];
  for (const [name, version, body, hook, message] of rows) {
    assert.throws(() => readResponse(version, 'u1', body, hook), (e: unknown) => e instanceof CallError && e.message === message, name);
  }
  // v1beta1 answers are not checked for uid or kind, and a patch counts as JSONPatch.
  const beta = readResponse('v1beta1', 'u1', { response: { allowed: true, patch } }, mutating);
  assert.equal(beta.allowed, true);
  assert.deepEqual(beta.patch, [{ op: 'add', path: '/metadata/labels', value: {} }]);
  const denied = readResponse('v1', 'u1', ok({ allowed: false, status: { code: 403, reason: 'Forbidden', message: 'nope' }, warnings: ['careful'] }), validating);
  assert.deepEqual([denied.allowed, denied.status, denied.warnings], [false, { code: 403, reason: 'Forbidden', message: 'nope' }, ['careful']]);
});

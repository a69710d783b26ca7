import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compactRules, compactString, covers, ruleAllows } from '../../../src/cluster/authz/rules.js';
import type { PolicyRule } from '../../../src/cluster/authz/types.js';
import { nonResource, resource, user } from './fixtures.js';

const jane = user('jane');

test('RuleAllows: one row per case', () => {
  const rows: Array<[string, PolicyRule, ReturnType<typeof resource>, boolean]> = [
    ['exact verb, group, resource', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, resource(jane, 'get', 'ns', '', 'pods', 'p'), true],
    ['other verb', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, resource(jane, 'list', 'ns', '', 'pods'), false],
    ['star verb', { verbs: ['*'], apiGroups: [''], resources: ['pods'] }, resource(jane, 'deletecollection', 'ns', '', 'pods'), true],
    ['other group', { verbs: ['get'], apiGroups: ['apps'], resources: ['pods'] }, resource(jane, 'get', 'ns', '', 'pods'), false],
    ['star group', { verbs: ['get'], apiGroups: ['*'], resources: ['deployments'] }, resource(jane, 'get', 'ns', 'apps', 'deployments'), true],
    ['missing apiGroups never match', { verbs: ['get'], resources: ['pods'] }, resource(jane, 'get', 'ns', '', 'pods'), false],
    ['plain resource does not cover its subresource', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, resource(jane, 'get', 'ns', '', 'pods', 'p', 'log'), false],
    ['resource/subresource', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, resource(jane, 'get', 'ns', '', 'pods', 'p', 'log'), true],
    ['resource/subresource does not cover the resource', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, resource(jane, 'get', 'ns', '', 'pods', 'p'), false],
    ['*/subresource', { verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }, resource(jane, 'get', 'ns', 'apps', 'deployments', 'd', 'scale'), true],
    ['*/subresource does not cover another subresource', { verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }, resource(jane, 'get', 'ns', 'apps', 'deployments', 'd', 'status'), false],
    ['star resource covers subresources', { verbs: ['get'], apiGroups: [''], resources: ['*'] }, resource(jane, 'get', 'ns', '', 'pods', 'p', 'log'), true],
    ['resourceNames: listed name', { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a', 'b'] }, resource(jane, 'get', 'ns', '', 'pods', 'b'), true],
    ['resourceNames: other name', { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }, resource(jane, 'get', 'ns', '', 'pods', 'c'), false],
    ['resourceNames never match a request without a name', { verbs: ['list'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }, resource(jane, 'list', 'ns', '', 'pods'), false],
    ['nonResourceURLs do not apply to resources', { verbs: ['get'], nonResourceURLs: ['*'] }, resource(jane, 'get', 'ns', '', 'pods'), false],
    ['nonResource exact', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, nonResource(jane, 'get', '/healthz'), true],
    ['nonResource exact, other path', { verbs: ['get'], nonResourceURLs: ['/healthz'] }, nonResource(jane, 'get', '/healthz/ping'), false],
    ['nonResource trailing star', { verbs: ['get'], nonResourceURLs: ['/apis/*'] }, nonResource(jane, 'get', '/apis/apps/v1'), true],
    ['nonResource trailing star needs the prefix', { verbs: ['get'], nonResourceURLs: ['/apis/*'] }, nonResource(jane, 'get', '/apis'), false],
    ['nonResource star', { verbs: ['*'], nonResourceURLs: ['*'] }, nonResource(jane, 'post', '/anything'), true],
    ['nonResource verb', { verbs: ['get'], nonResourceURLs: ['*'] }, nonResource(jane, 'post', '/anything'), false],
    ['resource rules do not apply to paths', { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, nonResource(jane, 'get', '/healthz'), false],
  ];
  for (const [name, rule, attributes, want] of rows) assert.equal(ruleAllows(attributes, rule), want, name);
});

test('covers: owner rules against requested rules, with what is missing', () => {
  const rows: Array<[string, PolicyRule[], PolicyRule[], PolicyRule[]]> = [
    ['star covers all', [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], [{ verbs: ['get', 'delete'], apiGroups: ['', 'apps'], resources: ['pods', 'deployments'] }], []],
    ['missing verb', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }], [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] }], [{ apiGroups: [''], resources: ['pods'], verbs: ['delete'] }]],
    ['*/sub covers x/sub', [{ verbs: ['get'], apiGroups: [''], resources: ['*/log'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }], []],
    ['pods does not cover pods/log', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }], [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }]],
    ['named owner covers only its names', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a', 'b'] }], [{ apiGroups: [''], resources: ['pods'], verbs: ['get'], resourceNames: ['b'] }]],
    ['named owner does not cover unnamed', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]],
    ['url prefix', [{ verbs: ['get'], nonResourceURLs: ['/apis/*'] }], [{ verbs: ['get'], nonResourceURLs: ['/apis/apps', '/healthz'] }], [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }]],
  ];
  for (const [name, owner, requested, missing] of rows) assert.deepEqual(covers(owner, requested).missing, missing, name);
});

test('compact strings print as upstream, verbs merged per resource', () => {
  const compacted = compactRules([
    { apiGroups: [''], resources: ['pods'], verbs: ['delete'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['create'] },
    { nonResourceURLs: ['/x'], verbs: ['get'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get'], resourceNames: ['a'] },
  ]).map(compactString);
  assert.deepEqual(compacted, [
    '{NonResourceURLs:["/x"], Verbs:["get"]}',
    '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "create"]}',
    '{APIGroups:[""], Resources:["pods"], ResourceNames:["a"], Verbs:["get"]}',
  ]);
});

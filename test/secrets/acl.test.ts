// ACL policies: HCL and JSON documents, glob and segment-wildcard priority, parameter rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Acl } from '../../src/secrets/acl/acl.js';
import { DEFAULT_POLICY, parsePolicy, PolicyParseError } from '../../src/secrets/acl/policy.js';

const acl = (...docs: string[]) => new Acl(docs.map((d, i) => parsePolicy(`p${i}`, d)));

test('HCL and JSON documents give the same rules', () => {
  const hcl = parsePolicy('a', `
    # comment
    path "secret/data/*" {
      capabilities = ["read", "list"]
    }
    path "sys/mounts" { policy = "write" }
  `);
  const json = parsePolicy('b', JSON.stringify({ path: { 'secret/data/*': { capabilities: ['read', 'list'] }, 'sys/mounts': { policy: 'write' } } }));
  assert.deepEqual(hcl.rules, json.rules);
});

test('parse errors are 400 failed to parse policy', () => {
  assert.throws(() => parsePolicy('x', 'path "a" { capabilities = ["fly"] }'), (e: unknown) => e instanceof PolicyParseError && e.statusCode === 400 && /invalid capability "fly"/.test(e.message));
  assert.throws(() => parsePolicy('x', 'path "a" { capabilities = ['), /failed to parse policy: At 1:/);
  assert.throws(() => parsePolicy('x', 'path "a*b" { capabilities = ["read"] }'), /glob \* may only appear at the end/);
  assert.doesNotThrow(() => parsePolicy('default', DEFAULT_POLICY));
});

test('exact beats glob; the longer glob wins; + segments lose to a later wildcard', () => {
  const a = acl(`
    path "secret/*" { capabilities = ["read"] }
    path "secret/foo*" { capabilities = ["create"] }
    path "secret/foo/bar" { capabilities = ["delete"] }
    path "secret/+/teamb" { capabilities = ["list"] }
    path "secret/+/+" { capabilities = ["update"] }
  `);
  assert.deepEqual(a.capabilities('secret/foo/bar'), ['delete']);
  assert.deepEqual(a.capabilities('secret/foobar'), ['create']);
  assert.deepEqual(a.capabilities('secret/other'), ['read']);
  // The first wildcard (+ at 7) is earlier than the glob of secret/foo* (10): secret/foo* wins for secret/foo/teamb.
  assert.deepEqual(a.capabilities('secret/foo/teamb'), ['create']);
  assert.deepEqual(a.capabilities('secret/x/teamb'), ['list'], 'fewer + segments win');
  assert.deepEqual(a.capabilities('secret/x/y'), ['update']);
  assert.deepEqual(a.capabilities('other'), ['deny']);
});

test('the same pattern in two policies is united; deny wins', () => {
  const a = acl('path "kv/a" { capabilities = ["read"] }', 'path "kv/a" { capabilities = ["update"] }');
  assert.deepEqual(a.capabilities('kv/a'), ['read', 'update']);
  const d = acl('path "kv/*" { capabilities = ["read", "sudo"] }', 'path "kv/*" { capabilities = ["deny"] }');
  assert.deepEqual(d.capabilities('kv/x'), ['deny']);
  assert.equal(d.allowOperation('read', 'kv/x', {}).allowed, false);
});

test('list falls back to the exact rule without the trailing slash', () => {
  const a = acl('path "auth/token/accessors" { capabilities = ["list", "sudo"] }');
  const decision = a.allowOperation('list', 'auth/token/accessors/', {});
  assert.deepEqual([decision.allowed, decision.sudo], [true, true]);
});

test('allowed, denied and required parameters', () => {
  const a = acl(`
    path "auth/userpass/users/*" {
      capabilities = ["create", "update"]
      allowed_parameters = { "password" = [], "token_policies" = ["dev", "web-*"] }
      denied_parameters = { "token_policies" = ["web-admin"] }
    }
    path "kv/req" {
      capabilities = ["update"]
      required_parameters = ["name"]
    }
  `);
  const ok = (data: Record<string, unknown>) => a.allowOperation('update', 'auth/userpass/users/bob', data).allowed;
  assert.equal(ok({ password: 'x' }), true);
  assert.equal(ok({ token_policies: 'web-app' }), true);
  assert.equal(ok({ token_policies: 'web-admin' }), false, 'denied value');
  assert.equal(ok({ token_policies: 'ops' }), false, 'not an allowed value');
  assert.equal(ok({ ttl: '1h' }), false, 'parameter not allowed');
  assert.equal(a.allowOperation('update', 'kv/req', { other: 1 }).allowed, false);
  assert.equal(a.allowOperation('update', 'kv/req', { name: 'n' }).allowed, true);
});

test('root policy grants everything', () => {
  const root = new Acl([{ name: 'root', raw: '', rules: [] }]);
  assert.deepEqual(root.capabilities('anything'), ['root']);
  assert.equal(root.allowOperation('delete', 'sys/mounts/x', {}).sudo, true);
});

// --authentication=token and --authorization=basic: the bearer token becomes input.identity and
// data.system.authz.allow decides every request, with OPA's input shape and OPA's refusals.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OPAClient } from '@styra/opa';
import { call, SEED_POLICY_V1, startEngine } from './helpers.js';

const AUTHZ = `package system.authz

default allow = false

# The management token may do anything.
allow = true if input.identity == "s3cret-token"

# Anyone may ask the httpapi decision, and see health.
allow = true if {
  input.method == "POST"
  input.path == ["v1", "data", "httpapi", "authz"]
  input.body.input.user != "mallory"
}

allow = true if input.path == ["health"]

# Refuse /echo with a reason that tells whether the authorizer's input had OPA's shape.
allow = {"allowed": false, "reason": "input as OPA gives it"} if {
  input.method == "GET"
  input.path == ["echo", "a", "b"]
  input.params == {"x": ["1", "2"]}
  input.headers["X-Custom-Header"] == ["v"]
  not input.identity
}
`;

describe('token authentication and basic authorization', () => {
  let dir: string;
  let engine: Awaited<ReturnType<typeof startEngine>>;
  let base: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'policy-authz-'));
    await writeFile(path.join(dir, 'authz.rego'), AUTHZ);
    await writeFile(path.join(dir, 'httpapi.rego'), SEED_POLICY_V1);
    engine = await startEngine({ paths: [dir], authentication: 'token', authorization: 'basic' });
    base = engine.url;
  });
  after(async () => {
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('no token: rejected by the administrative policy with 401', async () => {
    const reply = await call(base, 'GET', '/v1/policies');
    assert.equal(reply.status, 401);
    assert.deepEqual(reply.json, { code: 'unauthorized', message: 'request rejected by administrative policy' });
    const wrongToken = await call(base, 'GET', '/v1/policies', undefined, { authorization: 'Bearer nope' });
    assert.equal(wrongToken.status, 401);
  });

  test('the right token (input.identity) is let through, also for the official client', async () => {
    const reply = await call(base, 'GET', '/v1/policies', undefined, { authorization: 'Bearer s3cret-token' });
    assert.equal(reply.status, 200);
    const client = new OPAClient(base, { headers: { authorization: 'Bearer s3cret-token' } });
    assert.deepEqual(await client.evaluate('httpapi/authz', { method: 'GET', path: ['salary', 'bob'], user: 'bob' }), { allow: true });
  });

  test('the policy sees method, path (decoded and split as Go does), params and the parsed body', async () => {
    const ok = await call(base, 'POST', '/v1/data/httpapi/authz', { input: { user: 'bob' } });
    assert.equal(ok.status, 200);
    const mallory = await call(base, 'POST', '/v1/data/httpapi/authz', { input: { user: 'mallory' } });
    assert.equal(mallory.status, 401);
    const echo = await call(base, 'GET', '/echo/a%2Fb?x=1&x=2', undefined, { 'x-custom-header': 'v' });
    assert.equal(echo.status, 401);
    assert.deepEqual(echo.json, { code: 'unauthorized', message: 'input as OPA gives it' });
    assert.equal((await call(base, 'GET', '/health')).status, 200);
  });

  test('without an authorization policy every request is refused as OPA does (500)', async () => {
    const bare = await startEngine({ authentication: 'token', authorization: 'basic' });
    try {
      const reply = await call(bare.url, 'GET', '/health', undefined, { authorization: 'Bearer x' });
      assert.equal(reply.status, 500);
      assert.deepEqual(reply.json, { code: 'internal_error', message: 'authorization policy missing or undefined' });
    } finally {
      await bare.close();
    }
  });
});

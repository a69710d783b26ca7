// The seed's sample application against a real policy engine, both on loopback: 200 when the
// policy allows, 401 `Unauthorized` when allow is false or missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/common/log.js';
import { startPolicyEngine } from '../../src/policy/runtime.js';
import { startApp } from './app.js';

const basic = (user: string) => ({ authorization: `Basic ${Buffer.from(`${user}:pw`).toString('base64')}` });

test('the sample app answers 200 or 401 Unauthorized as the policy decides', async (t) => {
  const engine = await startPolicyEngine({
    address: { host: '127.0.0.1', port: 0 },
    logger: silentLogger(),
    paths: ['examples/http-authz/policy.rego', 'examples/http-authz/data.json'],
    regoVersion: 'v0',
  });
  t.after(() => engine.close());
  const app = await startApp({ policyUrl: engine.url });
  t.after(() => app.close());

  const own = await fetch(`${app.url}/salary/bob`, { headers: basic('bob') });
  assert.equal(own.status, 200);
  assert.deepEqual(await own.json(), { path: ['salary', 'bob'], user: 'bob' });

  const managed = await fetch(`${app.url}/salary/alice`, { headers: basic('bob') });
  assert.equal(managed.status, 200);

  const other = await fetch(`${app.url}/salary/bob`, { headers: basic('alice') });
  assert.equal(other.status, 401);
  assert.equal(await other.text(), 'Unauthorized');

  const anonymous = await fetch(`${app.url}/salary/bob`);
  assert.equal(anonymous.status, 401);
});

test('the sample app denies when the engine has no decision (allow missing)', async (t) => {
  const engine = await startPolicyEngine({ address: { host: '127.0.0.1', port: 0 }, logger: silentLogger() });
  t.after(() => engine.close());
  const app = await startApp({ policyUrl: engine.url });
  t.after(() => app.close());
  const reply = await fetch(`${app.url}/salary/bob`, { headers: basic('bob') });
  assert.equal(reply.status, 401);
  assert.equal(await reply.text(), 'Unauthorized');
});

test('the v1 form of the policy decides the same', async (t) => {
  const engine = await startPolicyEngine({
    address: { host: '127.0.0.1', port: 0 },
    logger: silentLogger(),
    paths: ['examples/http-authz/policy.v1.rego', 'examples/http-authz/data.json'],
  });
  t.after(() => engine.close());
  const app = await startApp({ policyUrl: engine.url });
  t.after(() => app.close());
  assert.equal((await fetch(`${app.url}/salary/alice`, { headers: basic('bob') })).status, 200);
  assert.equal((await fetch(`${app.url}/salary/bob`, { headers: basic('alice') })).status, 401);
});

// The OPA REST API end to end: the official TypeScript client (@styra/opa) and plain HTTP against a
// real engine on loopback.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { OPAClient } from '@styra/opa';
import { call, SEED_POLICY_V1, startEngine } from './helpers.js';

type Engine = Awaited<ReturnType<typeof startEngine>>;

const bob = { method: 'GET', path: ['salary', 'bob'], user: 'bob' };
const aliceReadsBob = { method: 'GET', path: ['salary', 'bob'], user: 'alice' };
const bobReadsAlice = { method: 'GET', path: ['salary', 'alice'], user: 'bob' };

describe('policy engine REST API', () => {
  let engine: Engine;
  let base: string;
  let opa: OPAClient;

  before(async () => {
    engine = await startEngine({ config: { decision_logs: { console: true } } });
    base = engine.url;
    opa = new OPAClient(base);
    const put = await call(base, 'PUT', '/v1/policies/httpapi/authz.rego', SEED_POLICY_V1, { 'content-type': 'text/plain' });
    assert.equal(put.status, 200);
    assert.equal(put.text, '{}\n');
  });
  after(() => engine.close());

  test('the seed policy answers allow true and false, with the official client and with curl-style HTTP', async () => {
    assert.deepEqual(await opa.evaluate('httpapi/authz', bob), { allow: true });
    assert.deepEqual(await opa.evaluate('httpapi/authz', aliceReadsBob), { allow: false });
    const yes = await call(base, 'POST', '/v1/data/httpapi/authz', { input: bob }, { 'content-type': 'application/json' });
    assert.equal(yes.status, 200);
    assert.equal(yes.json.result.allow, true);
    assert.match(yes.json.decision_id, /^[0-9a-f-]{36}$/);
    const no = await call(base, 'POST', '/v1/data/httpapi/authz/allow', { input: aliceReadsBob });
    assert.equal(no.json.result, false);
  });

  test('decisions are logged as JSON lines with OPA fields, matching the decision_id returned', async () => {
    const reply = await call(base, 'POST', '/v1/data/httpapi/authz', { input: bob });
    const entry = engine.decisions().find((d) => d.decision_id === reply.json.decision_id);
    assert.ok(entry, 'decision logged');
    assert.equal(entry.path, 'httpapi/authz');
    assert.deepEqual(entry.input, bob);
    assert.deepEqual(entry.result, { allow: true });
    assert.match(String(entry.requested_by), /^127\.0\.0\.1:\d+$/);
    assert.match(String(entry.timestamp), /^\d{4}-\d\d-\d\dT/);
    assert.equal(typeof (entry.metrics as Record<string, number>).timer_server_handler_ns, 'number');
  });

  test('policies are listed and read back with id, raw text and AST', async () => {
    const list = await call(base, 'GET', '/v1/policies');
    assert.equal(list.status, 200);
    const policy = list.json.result.find((p: { id: string }) => p.id === 'httpapi/authz.rego');
    assert.ok(policy);
    assert.equal(policy.raw, SEED_POLICY_V1);
    assert.deepEqual(policy.ast.package.path.map((t: { value: string }) => t.value), ['data', 'httpapi', 'authz']);
    const one = await call(base, 'GET', '/v1/policies/httpapi/authz.rego');
    assert.equal(one.json.result.id, 'httpapi/authz.rego');
    assert.equal(one.json.result.raw, SEED_POLICY_V1);
    const missing = await call(base, 'GET', '/v1/policies/nope.rego');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json, { code: 'resource_not_found', message: 'storage_not_found_error: policy id "nope.rego"' });
  });

  test('data is patched (JSON Patch), put, read and deleted with OPA status codes', async () => {
    assert.deepEqual(await opa.evaluate('httpapi/authz', bobReadsAlice), { allow: false });
    const patch = await call(base, 'PATCH', '/v1/data', [{ op: 'add', path: '/reports', value: { bob: ['alice'] } }], { 'content-type': 'application/json-patch+json' });
    assert.equal(patch.status, 204);
    assert.equal(patch.text, '');
    assert.deepEqual(await opa.evaluate('httpapi/authz', bobReadsAlice), { allow: true });

    assert.equal((await call(base, 'PATCH', '/v1/data/reports/bob', [{ op: 'add', path: '-', value: 'carol' }])).status, 204);
    assert.deepEqual((await call(base, 'GET', '/v1/data/reports/bob')).json.result, ['alice', 'carol']);

    const put = await call(base, 'PUT', '/v1/data/teams/eng/lead', '"dana"');
    assert.equal(put.status, 204);
    assert.deepEqual((await call(base, 'GET', '/v1/data/teams')).json.result, { eng: { lead: 'dana' } });
    const again = await call(base, 'PUT', '/v1/data/teams/eng/lead', '"erin"', { 'if-none-match': '*' });
    assert.equal(again.status, 304);
    assert.deepEqual((await call(base, 'GET', '/v1/data/teams/eng/lead')).json.result, 'dana');

    assert.equal((await call(base, 'DELETE', '/v1/data/teams')).status, 204);
    const gone = await call(base, 'DELETE', '/v1/data/teams');
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.json, { code: 'resource_not_found', message: 'storage_not_found_error: /teams: document does not exist' });

    const badOp = await call(base, 'PATCH', '/v1/data', [{ op: 'move', path: '/x' }]);
    assert.equal(badOp.status, 400);
    assert.deepEqual(badOp.json, { code: 'invalid_parameter', message: 'bad patch operation: move' });
    const noParent = await call(base, 'PATCH', '/v1/data', [{ op: 'add', path: '/no/such/parent', value: 1 }]);
    assert.equal(noParent.status, 404);
    assert.equal(noParent.json.code, 'resource_not_found');
  });

  test('an undefined document is {} on the Data API; POST without input warns', async () => {
    const undefinedDoc = await call(base, 'GET', '/v1/data/no/such/doc');
    assert.equal(undefinedDoc.status, 200);
    assert.equal(undefinedDoc.text.startsWith('{'), true);
    assert.equal(undefinedDoc.json.result, undefined);
    const noInput = await call(base, 'POST', '/v1/data/httpapi/authz', {});
    assert.deepEqual(noInput.json.warning, { code: 'api_usage_warning', message: "'input' key missing from the request" });
    assert.deepEqual(noInput.json.result, { allow: false });
    const getWithInput = await call(base, 'GET', `/v1/data/httpapi/authz/allow?input=${encodeURIComponent(JSON.stringify(bob))}`);
    assert.equal(getWithInput.json.result, true);
  });

  test('a module with a syntax error is 400 invalid_parameter with located errors, and the old policy keeps answering', async () => {
    const bad = await call(base, 'PUT', '/v1/policies/httpapi/authz.rego', 'package httpapi.authz\n\nallow if {\n  input.method ==\n', { 'content-type': 'text/plain' });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('content-type'), 'application/json');
    assert.equal(bad.json.code, 'invalid_parameter');
    assert.equal(bad.json.message, 'error(s) occurred while compiling module(s)');
    assert.ok(bad.json.errors.length >= 1);
    const [first] = bad.json.errors;
    assert.equal(first.code, 'rego_parse_error');
    assert.equal(first.location.file, 'httpapi/authz.rego');
    assert.equal(typeof first.location.row, 'number');
    assert.equal(typeof first.location.col, 'number');
    assert.ok(bad.text.startsWith('{\n  "code": "invalid_parameter",\n'), 'OPA writes errors indented');
    assert.deepEqual(await opa.evaluate('httpapi/authz', bob), { allow: true });
    const stillThere = await call(base, 'GET', '/v1/policies/httpapi/authz.rego');
    assert.equal(stillThere.json.result.raw, SEED_POLICY_V1);
  });

  test('malformed JSON input is 400 invalid_parameter', async () => {
    const reply = await call(base, 'POST', '/v1/data/httpapi/authz', '{"input": {', { 'content-type': 'application/json' });
    assert.equal(reply.status, 400);
    assert.equal(reply.json.code, 'invalid_parameter');
    assert.match(reply.json.message, /^body contains malformed input document: /);
    const viaGet = await call(base, 'GET', '/v1/data/httpapi/authz?input=%7Bnope');
    assert.equal(viaGet.status, 400);
    assert.equal(viaGet.json.code, 'invalid_parameter');
  });

  test('unknown paths are 404 and wrong methods 405, as OPA answers', async () => {
    const unknown = await call(base, 'GET', '/v2/data/x');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.text, '404 page not found\n');
    const wrong = await call(base, 'DELETE', '/v1/query');
    assert.equal(wrong.status, 405);
    assert.equal(wrong.text, '');
    assert.equal((await call(base, 'PATCH', '/v1/policies/httpapi/authz.rego', 'x')).status, 405);
  });

  test('the default decision (POST /) answers the bare value, or 404 undefined_document', async () => {
    const missing = await call(base, 'POST', '/', bob);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json, { code: 'undefined_document', message: 'document missing: data.system.main' });
    await call(base, 'PUT', '/v1/policies/system/main', 'package system\n\nmain := {"allowed": data.httpapi.authz.allow} if input.user\n');
    assert.deepEqual(await opa.evaluateDefault(bob), { allowed: true });
    const raw = await call(base, 'POST', '/', bob);
    assert.equal(raw.text, '{"allowed":true}\n');
    const undefinedMain = await call(base, 'POST', '/', { method: 'GET' });
    assert.equal(undefinedMain.status, 404);
    assert.deepEqual(undefinedMain.json, { code: 'undefined_document', message: 'document undefined: data.system.main' });
    const v0 = await call(base, 'POST', '/v0/data/httpapi/authz/allow', bob);
    assert.equal(v0.text, 'true\n');
    await call(base, 'DELETE', '/v1/policies/system/main');
  });

  test('request bodies may be gzip-compressed', async () => {
    const reply = await call(base, 'POST', '/v1/data/httpapi/authz', gzipSync(JSON.stringify({ input: bob })), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.json.result, { allow: true });
  });

  test('?pretty, ?metrics and ?provenance shape the response as OPA does', async () => {
    const pretty = await call(base, 'GET', '/v1/data/reports?pretty=true');
    assert.equal(pretty.text, `{\n  "result": {\n    "bob": [\n      "alice",\n      "carol"\n    ]\n  },\n  "decision_id": "${pretty.json.decision_id}"\n}\n`);
    const metrics = await call(base, 'POST', '/v1/data/httpapi/authz?metrics=true', { input: bob });
    assert.equal(typeof metrics.json.metrics.timer_server_handler_ns, 'number');
    assert.equal(typeof metrics.json.metrics.timer_rego_query_eval_ns, 'number');
    const provenance = await call(base, 'POST', '/v1/data/httpapi/authz?provenance', { input: bob });
    assert.equal(typeof provenance.json.provenance.version, 'string');
  });

  test('the Query API returns variable bindings per solution', async () => {
    const get = await call(base, 'GET', `/v1/query?q=${encodeURIComponent('x := data.reports.bob[_]')}`);
    assert.equal(get.status, 200);
    assert.deepEqual(get.json, { result: [{ x: 'alice' }, { x: 'carol' }] });
    const post = await call(base, 'POST', '/v1/query', { query: 'input.n > 1', input: { n: 0 } });
    assert.deepEqual(post.json, {});
    const bad = await call(base, 'GET', `/v1/query?q=${encodeURIComponent('x := ')}`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json.message, 'error(s) occurred while parsing query');
    const missingQ = await call(base, 'GET', '/v1/query');
    assert.deepEqual(missingQ.json, { code: 'invalid_parameter', message: "missing parameter 'q'" });
  });

  test('base documents may not overlap rules, nor rules base documents', async () => {
    const overlap = await call(base, 'PUT', '/v1/data/httpapi/authz/allow', 'true');
    assert.equal(overlap.status, 400);
    assert.equal(overlap.json.code, 'invalid_parameter');
    assert.match(overlap.json.message, /conflicting rule for data path httpapi\/authz\/allow found/);
    const rule = await call(base, 'PUT', '/v1/policies/over-data', 'package reports\n\nbob := ["nobody"]\n');
    assert.equal(rule.status, 400);
    assert.deepEqual(rule.json.errors, [{ code: 'rego_compile_error', message: 'conflicting rule for data path reports/bob found' }]);
    assert.equal((await call(base, 'GET', '/v1/policies/over-data')).status, 404);
  });

  test('a module others depend on cannot be deleted', async () => {
    await call(base, 'PUT', '/v1/policies/lib', 'package lib\n\nis_admin(user) if user == "root"\n');
    await call(base, 'PUT', '/v1/policies/uses-lib', 'package app\n\nallow if data.lib.is_admin(input.user)\n');
    const refused = await call(base, 'DELETE', '/v1/policies/lib');
    assert.equal(refused.status, 400);
    assert.equal(refused.json.code, 'invalid_operation');
    assert.equal(refused.json.message, 'error(s) occurred while compiling module(s)');
    assert.equal((await call(base, 'DELETE', '/v1/policies/uses-lib')).status, 200);
    assert.equal((await call(base, 'DELETE', '/v1/policies/lib')).status, 200);
  });

  test('health, config, status and Prometheus metrics', async () => {
    assert.deepEqual((await call(base, 'GET', '/health')).json, {});
    assert.equal((await call(base, 'GET', '/health?bundles&plugins')).status, 200);
    const live = await call(base, 'GET', '/health/live');
    assert.equal(live.status, 500);
    assert.deepEqual(live.json, { error: 'health check (data.system.health.live) was undefined' });
    await call(base, 'PUT', '/v1/policies/health', 'package system.health\n\nlive := true\n');
    assert.equal((await call(base, 'GET', '/health/live')).status, 200);
    await call(base, 'DELETE', '/v1/policies/health');
    const config = await call(base, 'GET', '/v1/config');
    assert.equal(config.json.result.default_decision, '/system/main');
    assert.equal(config.json.result.default_authorization_decision, '/system/authz/allow');
    assert.deepEqual(config.json.result.decision_logs, { console: true });
    const status = await call(base, 'GET', '/v1/status');
    assert.deepEqual(status.json, { code: 'internal_error', message: 'status plugin not enabled' });
    const prom = await call(base, 'GET', '/metrics');
    assert.equal(prom.status, 200);
    assert.match(prom.text, /http_request_duration_seconds_count\{code="200",handler="v1\/data",method="post"\} \d+/);
    assert.match(prom.text, /^process_cpu_user_seconds_total \d/m);
  });
});

// The finer points of OPA's answers: exact big numbers, evaluation errors, strict builtin errors,
// explanations, YAML and header-less bodies, HEAD, the body limit, and HTTPS.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { CertificateAuthority } from '../../src/common/tls.js';
import { call, startEngine } from './helpers.js';

describe('details of the API', () => {
  let engine: Awaited<ReturnType<typeof startEngine>>;
  let base: string;

  before(async () => {
    engine = await startEngine({ config: { server: { decoding: { max_length: 4096 } } } });
    base = engine.url;
    const put = await call(base, 'PUT', '/v1/policies/details', `package details

echo := input

pick := input.a if input.a
pick := input.b if input.b

quotient := 10 / input.d
`);
    assert.equal(put.status, 200);
  });
  after(() => engine.close());

  test('integers beyond 2^53 survive input, data and output exactly', async () => {
    const reply = await call(base, 'POST', '/v1/data/details/echo', '{"input": {"n": 12345678901234567890123, "m": 1.5}}');
    assert.equal(reply.text, '{"result":{"m":1.5,"n":12345678901234567890123}}\n');
    assert.equal((await call(base, 'PUT', '/v1/data/big', '{"id": 9007199254740993}')).status, 204);
    assert.equal((await call(base, 'GET', '/v1/data/big')).text, '{"result":{"id":9007199254740993}}\n');
  });

  test('a conflict at evaluation time is 500 internal_error with the evaluation error', async () => {
    const reply = await call(base, 'POST', '/v1/data/details/pick', { input: { a: 1, b: 2 } });
    assert.equal(reply.status, 500);
    assert.equal(reply.json.code, 'internal_error');
    assert.equal(reply.json.message, 'error(s) occurred while evaluating query');
    assert.equal(reply.json.errors[0].code, 'eval_conflict_error');
    assert.equal(reply.json.errors[0].message, 'complete rules must not produce multiple outputs');
  });

  test('?strict-builtin-errors turns a builtin error from undefined into a 500', async () => {
    const lenient = await call(base, 'POST', '/v1/data/details/quotient', { input: { d: 0 } });
    assert.equal(lenient.status, 200);
    assert.equal(lenient.json.result, undefined);
    const strict = await call(base, 'POST', '/v1/data/details/quotient?strict-builtin-errors', { input: { d: 0 } });
    assert.equal(strict.status, 500);
    assert.equal(strict.json.errors[0].code, 'eval_builtin_error');
  });

  test('?explain=full returns an explanation', async () => {
    const reply = await call(base, 'POST', '/v1/data/details/echo?explain=full', { input: { x: 1 } });
    assert.ok(Array.isArray(reply.json.explanation) && reply.json.explanation.length > 0);
  });

  test('YAML bodies, bodies without a content type, and HEAD', async () => {
    const yaml = await call(base, 'POST', '/v1/data/details/echo', 'input:\n  user: bob\n', { 'content-type': 'application/x-yaml' });
    assert.deepEqual(yaml.json.result, { user: 'bob' });
    // kube-mgmt uploads policies without a Content-Type.
    const response = await fetch(`${base}/v1/policies/plain`, { method: 'PUT', body: new Blob(['package plain\n\nx := 1\n']) });
    assert.equal(response.status, 200);
    assert.equal((await call(base, 'GET', '/v1/data/plain/x')).json.result, 1);
    assert.equal((await call(base, 'HEAD', '/health')).status, 200);
  });

  test('a body over server.decoding.max_length is refused with OPA\'s 400', async () => {
    const reply = await call(base, 'POST', '/v1/data/details/echo', { input: 'x'.repeat(5000) });
    assert.equal(reply.status, 400);
    assert.deepEqual(reply.json, { code: 'invalid_parameter', message: 'request body too large' });
  });
});

test('with a certificate and key the engine serves HTTPS (as an admission webhook needs)', async (t) => {
  const ca = await CertificateAuthority.create('test CA');
  const pair = await ca.issueServer({ commonName: 'policy', hosts: ['127.0.0.1'] });
  const engine = await startEngine({ tls: pair });
  t.after(() => engine.close());
  assert.match(engine.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const body = await new Promise<string>((resolve, reject) => {
    request(`${engine.url}/health`, { ca: ca.cert }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve(text));
    })
      .on('error', reject)
      .end();
  });
  assert.equal(body, '{}\n');
});

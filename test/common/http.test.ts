import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHttpServer, HttpError, listen, parseHostPort } from '../../src/common/http.js';
import { StartupError } from '../../src/common/errors.js';
import { silentLogger } from '../../src/common/log.js';

/** A toy protocol whose errors look like `{"oops": reason, "say": message}`. */
function server(bodyLimit?: number) {
  const app = createHttpServer({
    logger: silentLogger(),
    bodyLimit,
    errorResponse: (error) => {
      const e = error instanceof HttpError ? error : new HttpError(500, 'internal error', 'internal');
      return { statusCode: e.statusCode, body: { oops: e.reason, say: e.message } };
    },
  });
  app.post('/echo', async (request) => ({ got: (request.body as Buffer).toString('utf8'), type: request.headers['content-type'] ?? null }));
  app.get('/boom', async () => {
    throw new HttpError(409, 'already there', 'conflict');
  });
  app.get('/crash', async () => {
    throw new Error('secret internals');
  });
  return app;
}

test('handlers get the raw body whatever the content type; errors take the protocol shape', async () => {
  const app = server();
  const { url } = await listen(app, { host: '127.0.0.1', port: 0 });
  try {
    for (const type of ['application/json', 'text/plain', 'application/vnd.kubernetes.protobuf', 'application/x-made-up']) {
      const res = await fetch(`${url}/echo`, { method: 'POST', body: '{not json', headers: { 'content-type': type } });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { got: '{not json', type });
    }
    const conflict = await fetch(`${url}/boom`);
    assert.equal(conflict.status, 409);
    assert.deepEqual(await conflict.json(), { oops: 'conflict', say: 'already there' });

    const crash = await fetch(`${url}/crash`);
    assert.equal(crash.status, 500);
    assert.deepEqual(await crash.json(), { oops: 'internal', say: 'internal error' });

    const missing = await fetch(`${url}/nowhere`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { oops: 'not_found', say: 'GET /nowhere: not found' });
    assert.ok(missing.headers.get('x-request-id') === null || missing.headers.get('x-request-id')!.length > 0);
  } finally {
    await app.close();
  }
});

test('a body over the limit gets 413 in the protocol shape and the server keeps serving', async () => {
  const app = server(1024);
  const { url } = await listen(app, { host: '127.0.0.1', port: 0 });
  try {
    const big = await fetch(`${url}/echo`, { method: 'POST', body: 'x'.repeat(4096), headers: { 'content-type': 'text/plain' } });
    assert.equal(big.status, 413);
    assert.deepEqual(await big.json(), { oops: 'body_too_large', say: 'request body too large' });
    const small = await fetch(`${url}/echo`, { method: 'POST', body: 'ok', headers: { 'content-type': 'text/plain' } });
    assert.equal(small.status, 200);
  } finally {
    await app.close();
  }
});

test('a port in use is one clear line', async () => {
  const first = server();
  const { port } = await listen(first, { host: '127.0.0.1', port: 0 });
  const second = server();
  try {
    await assert.rejects(listen(second, { host: '127.0.0.1', port }), (error: unknown) => {
      assert.ok(error instanceof StartupError);
      assert.equal(error.message, `cannot listen on 127.0.0.1:${port}: address already in use`);
      return true;
    });
  } finally {
    await first.close();
    await second.close();
  }
});

test('HOST:PORT parsing', () => {
  assert.deepEqual(parseHostPort('localhost:8181'), { host: '127.0.0.1', port: 8181 });
  assert.deepEqual(parseHostPort(':8200'), { host: '127.0.0.1', port: 8200 });
  assert.deepEqual(parseHostPort('0.0.0.0:6443'), { host: '0.0.0.0', port: 6443 });
  assert.deepEqual(parseHostPort('[::1]:8181'), { host: '::1', port: 8181 });
  assert.throws(() => parseHostPort('8181'), /invalid address "8181": want HOST:PORT/);
  assert.throws(() => parseHostPort('h:99999'), StartupError);
});

// Consistency under load: concurrent policy PUTs (good and bad) and decisions. Every decision sees
// one whole policy version; failing PUTs change nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startEngine } from './helpers.js';

const version = (n: number) => `package versioned\n\n# both rules always agree within one version\nleft := ${n}\n\nright := ${n}\n`;

test('concurrent PUTs and decisions never see a torn or failed state', async (t) => {
  const engine = await startEngine();
  t.after(() => engine.close());
  assert.equal((await call(engine.url, 'PUT', '/v1/policies/v', version(0))).status, 200);

  const writes: Promise<number>[] = [];
  const reads: Promise<{ left: number; right: number }>[] = [];
  for (let i = 1; i <= 40; i++) {
    const body = i % 3 === 0 ? `package versioned\n\nleft := ${i}\n\nright := \n` : version(i);
    writes.push(call(engine.url, 'PUT', '/v1/policies/v', body).then((r) => r.status));
    reads.push(call(engine.url, 'GET', '/v1/data/versioned').then((r) => r.json.result));
  }
  const statuses = await Promise.all(writes);
  const results = await Promise.all(reads);
  statuses.forEach((status, index) => assert.equal(status, (index + 1) % 3 === 0 ? 400 : 200, `PUT #${index + 1}`));
  for (const result of results) {
    assert.equal(result.left, result.right, `torn read: ${JSON.stringify(result)}`);
    assert.notEqual(result.left % 3 === 0 && result.left !== 0, true, `a failed PUT became visible: ${result.left}`);
  }
  const final = (await call(engine.url, 'GET', '/v1/data/versioned')).json.result;
  assert.equal(final.left, final.right);
  assert.notEqual(final.left % 3, 0, 'the final state is a good version');
});

test('a failing data write in a PATCH changes nothing (all operations or none)', async (t) => {
  const engine = await startEngine();
  t.after(() => engine.close());
  await call(engine.url, 'PUT', '/v1/data/a', '{"x": 1}');
  const reply = await call(engine.url, 'PATCH', '/v1/data', [
    { op: 'replace', path: '/a/x', value: 2 },
    { op: 'remove', path: '/a/missing' },
  ]);
  assert.equal(reply.status, 404);
  assert.deepEqual((await call(engine.url, 'GET', '/v1/data/a')).json, { result: { x: 1 } });
});

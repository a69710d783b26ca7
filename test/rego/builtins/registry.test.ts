import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtins, capabilities, createBuiltinContext, invoke, BuiltinError } from '../../../src/rego/builtins/index.js';
import { call, fails } from './call.js';

test('operand kinds are checked from the declaration with OPA wording (eval_type_error)', () => {
  fails('count', [3], 'eval_type_error', 'count: operand 1 must be one of {array, object, set, string} but got number');
  fails('object.remove', ['a', []], 'eval_type_error', 'object.remove: operand 1 must be object but got string');
  fails('object.filter', [{}, null], 'eval_type_error', 'object.filter: operand 2 must be one of {object, set, array} but got null');
  fails('array.concat', [{}, []], 'eval_type_error', 'array.concat: operand 1 must be array but got object');
  fails('object.union', [{}, []], 'eval_type_error', 'object.union: operand 2 must be object but got array');
});

test('builtin failures are eval_builtin_error, not fatal unless strict', () => {
  try {
    call('div', [1, 0]);
    assert.fail('expected an error');
  } catch (e) {
    assert.ok(e instanceof BuiltinError);
    assert.equal(e.code, 'eval_builtin_error');
    assert.equal(e.message, 'div: divide by zero');
    assert.equal(e.fatal, false);
  }
});

test('network builtins fail clearly and fatally', () => {
  fails('http.send', [{ method: 'get' }], 'eval_type_error', 'http.send: missing required request parameters(s): {"url"}');
  fails('http.send', [{ method: 'get', url: 'https://example.com', bogus: 1 }], 'eval_type_error', 'http.send: invalid request parameters(s): {"bogus"}');
  try {
    call('http.send', [{ method: 'get', url: 'https://example.com' }]);
    assert.fail('expected an error');
  } catch (e) {
    assert.ok(e instanceof BuiltinError);
    assert.equal(e.fatal, true);
    assert.match(e.message, /^http\.send: not supported: /);
  }
  assert.throws(() => call('net.lookup_ip_addr', ['example.com']), /net\.lookup_ip_addr: not supported/);
});

test('capabilities lists every builtin with its declaration in OPA shape', () => {
  const caps = capabilities().builtins as { name: string; decl: { type: string; args: unknown[]; result?: unknown } }[];
  assert.equal(caps.length, builtins.all.length);
  const names = caps.map((c) => c.name);
  assert.deepEqual(names, [...names].sort());
  const replaceN = caps.find((c) => c.name === 'strings.replace_n')!;
  assert.deepEqual(replaceN.decl, {
    type: 'function',
    args: [{ type: 'object', dynamic: { key: { type: 'string' }, value: { type: 'string' } } }, { type: 'string' }],
    result: { type: 'string' },
  });
  assert.deepEqual(caps.find((c) => c.name === 'plus'), {
    name: 'plus',
    infix: '+',
    decl: { type: 'function', args: [{ type: 'number' }, { type: 'number' }], result: { type: 'number' } },
  });
  assert.equal((caps.find((c) => c.name === 'walk') as { relation?: boolean }).relation, true);
});

test('non-deterministic builtins are stable within one evaluation context', () => {
  const ctx = createBuiltinContext({ timeNs: 1_700_000_000_000_000_000n });
  const uuid = builtins.get('uuid.rfc4122')!;
  const a = invoke(uuid, ['k'], ctx);
  assert.equal(invoke(uuid, ['k'], ctx), a);
  assert.notEqual(invoke(uuid, ['other'], ctx), a);
  assert.match(a as string, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const r = builtins.get('rand.intn')!;
  const n = invoke(r, ['seed', 10], ctx) as number;
  assert.ok(n >= 0 && n < 10);
  assert.equal(invoke(r, ['seed', 10], ctx), n);
  assert.equal(invoke(builtins.get('time.now_ns')!, [], ctx), 1_700_000_000_000_000_000);
});

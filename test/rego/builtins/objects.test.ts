import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fails, json, relation, set } from './call.js';
import { stringifyJSON, RegoObject } from '../../../src/rego/value/index.js';

test('object builtins', () => {
  assert.equal(json('object.union', { a: { b: 1, c: 2 }, d: 1 }, { a: { b: 3 }, e: 2 }), '{"a":{"b":3,"c":2},"d":1,"e":2}');
  assert.equal(json('object.union_n', [{ a: { b: 2 } }, { a: 4 }, { a: { c: 3 } }]), '{"a":{"c":3}}');
  assert.equal(json('object.remove', { a: 1, b: 2, c: 3 }, set('a', 'c')), '{"b":2}');
  assert.equal(json('object.filter', { a: 1, b: 2, c: 3 }, ['a', 'z']), '{"a":1}');
  assert.equal(json('object.get', { a: { b: [5, 6] } }, ['a', 'b', 1], 'none'), '6');
  assert.equal(json('object.get', { a: 1 }, 'b', 'none'), '"none"');
  assert.equal(json('object.get', { a: 1 }, [], 'none'), '{"a":1}');
  assert.equal(json('object.keys', { b: 1, a: 2 }), '["a","b"]');
  assert.equal(json('object.subset', { a: { b: set(1, 2, 3), c: 1 } }, { a: { b: set(1) } }), 'true');
  assert.equal(json('object.subset', [1, 2, 3, 4], [2, 3]), 'true');
  assert.equal(json('object.subset', [1, 2, 3], [1, 3]), 'false');
  assert.equal(json('object.subset', [1, 2], set(2)), 'true');
  fails('object.subset', [{}, []], 'eval_type_error', 'object.subset: both arguments object.subset must be of the same type or array and set');
  fails('object.union_n', [[{}, 1]], 'eval_type_error', 'object.union_n: operand 1 must be array of objects but got array containing number');
  const nonString = new RegoObject([[1, 'one'], [[2], 'two']]);
  assert.equal(json('object.remove', nonString, [1]), '{"[2]":"two"}');
});

test('arrays and sets', () => {
  assert.equal(json('array.concat', [1], [2, 3]), '[1,2,3]');
  assert.equal(json('array.slice', [1, 2, 3, 4], -1, 2), '[1,2]');
  assert.equal(json('array.slice', [1, 2, 3], 2, 1), '[]');
  assert.equal(json('array.reverse', [1, 2, 3]), '[3,2,1]');
  assert.equal(json('array.flatten', [1, [2, [3, []]]]), '[1,2,3]');
  assert.equal(json('intersection', set(set(1, 2, 3), set(2, 3, 4))), '[2,3]');
  assert.equal(json('union', set(set(1), set(2))), '[1,2]');
  assert.equal(json('and', set(1, 2), set(2)), '[2]');
  assert.equal(json('or', set(1), set('a')), '[1,"a"]');
});

test('json.filter, json.remove and json.patch', () => {
  assert.equal(json('json.filter', { a: { b: 1, c: 2 }, d: [5, 6] }, ['a/b', ['d', '1']]), '{"a":{"b":1},"d":[6]}');
  assert.equal(json('json.filter', { a: { b: 1 } }, set('a', 'a/b')), '{"a":{"b":1}}');
  assert.equal(json('json.remove', { a: { b: 1, c: 2 }, d: [1, 2, 3] }, ['a/b', 'd/0']), '{"a":{"c":2},"d":[2,3]}');
  assert.equal(json('json.remove', { 'a/b': 1, c: 1 }, ['a~1b']), '{"c":1}');
  fails('json.filter', [{}, [1]], 'eval_type_error', 'json.filter: operand 2 must be one of {set, array} containing string paths or array of path segments but got number');
  const patch = (doc: unknown, ops: unknown[]) => json('json.patch', doc, ops);
  assert.equal(patch({ a: 1 }, [{ op: 'add', path: '/b', value: [1] }, { op: 'add', path: '/b/-', value: 2 }]), '{"a":1,"b":[1,2]}');
  assert.equal(patch({ a: [1, 2, 3] }, [{ op: 'remove', path: '/a/1' }]), '{"a":[1,3]}');
  assert.equal(patch({ a: 1 }, [{ op: 'move', from: '/a', path: '/b' }]), '{"b":1}');
  assert.equal(patch({ a: { x: 1 } }, [{ op: 'copy', from: '/a', path: '/b' }, { op: 'replace', path: '/a/x', value: 2 }]), '{"a":{"x":2},"b":{"x":1}}');
  assert.equal(patch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]), 'undefined');
  assert.equal(patch({ a: set('x') }, [{ op: 'add', path: ['a', 'y'], value: 'y' }]), '{"a":["x","y"]}');
});

test('walk and graphs', () => {
  const pairs = relation('walk', [{ a: [1, { b: 2 }] }]).map((v) => stringifyJSON(v));
  assert.deepEqual(pairs, [
    '[[],{"a":[1,{"b":2}]}]',
    '[["a"],[1,{"b":2}]]',
    '[["a",0],1]',
    '[["a",1],{"b":2}]',
    '[["a",1,"b"],2]',
  ]);
  const g = { a: ['b'], b: ['c', 'a'], c: [], d: ['e'] };
  assert.equal(json('graph.reachable', g, ['a']), '["a","b","c"]');
  assert.equal(json('graph.reachable_paths', g, ['a']), '[["a","b"],["a","b","c"]]');
  assert.equal(json('graph.reachable_paths', g, set('d')), '[["d"]]');
});

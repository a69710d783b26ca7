import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fails, json, parseJSON, set } from './call.js';

test('arithmetic keeps integers exact and floats as OPA prints them', () => {
  assert.equal(json('plus', parseJSON('9007199254740993'), 2), '9007199254740995');
  assert.equal(json('mul', parseJSON('123456789012345678'), 1000), '123456789012345678000');
  // OPA computes non-integers as 64-bit-mantissa binary floats and prints the shortest decimal
  assert.equal(json('minus', 0.3, 0.1), '0.20000000000000000002');
  assert.equal(json('plus', 0.1, 0.2), '0.3');
  assert.equal(json('div', 15.3, 3), '5.1');
  assert.equal(json('div', 1, 3), '0.33333333333333333334');
  assert.equal(json('rem', -7, 3), '-1');
  assert.equal(json('round', -2.5), '-3');
  assert.equal(json('ceil', 1.2), '2');
  assert.equal(json('floor', -1.2), '-2');
  assert.equal(json('abs', -4), '4');
  assert.equal(json('minus', set(1, 2, 3), set(2)), '[1,3]');
});

test('arithmetic errors are OPA errors', () => {
  fails('div', [1, 0], 'eval_builtin_error', 'div: divide by zero');
  fails('rem', [1, 0], 'eval_builtin_error', 'rem: modulo by zero');
  fails('rem', [1.5, 1], 'eval_builtin_error', 'rem: modulo on floating-point number');
  fails('minus', [set(1), 1], 'eval_type_error', 'minus: operand 2 must be set but got number');
  fails('minus', [1, set(1)], 'eval_type_error', 'minus: operand 2 must be number but got set');
  fails('minus', ['a', 1], 'eval_type_error', 'minus: operand 1 must be one of {number, set} but got string');
});

test('bits, ranges and aggregates', () => {
  assert.equal(json('bits.and', 12, 10), '8');
  assert.equal(json('bits.or', 12, 10), '14');
  assert.equal(json('bits.xor', 12, 10), '6');
  assert.equal(json('bits.negate', 5), '-6');
  assert.equal(json('bits.lsh', 1, 70), '1180591620717411303424');
  assert.equal(json('bits.rsh', -16, 2), '-4');
  fails('bits.and', [1.5, 1], 'eval_type_error', 'bits.and: operand 1 must be integer number but got floating-point number');
  assert.equal(json('numbers.range', 3, 0), '[3,2,1,0]');
  assert.equal(json('numbers.range_step', 0, 10, 4), '[0,4,8]');
  fails('numbers.range_step', [0, 10, 0], 'eval_builtin_error', 'numbers.range_step: step must be a positive number above zero');
  assert.equal(json('count', 'héllo'), '5');
  assert.equal(json('sum', [1, 2.5, 3]), '6.5');
  // 1e19 + 3.5 needs more than the 64 mantissa bits OPA's floats keep
  assert.equal(json('sum', [1, 2.5, parseJSON('10000000000000000000')]), '10000000000000000004');
  assert.equal(json('product', set(2, 3, 4)), '24');
  assert.equal(json('max', [1, 'a', null]), '"a"');
  assert.equal(json('min', []), 'undefined');
  assert.equal(json('sort', [3, 'a', null, [1], 2]), '[null,2,3,"a",[1]]');
  fails('sum', [[1, 'a']], 'eval_type_error', 'sum: operand 1 must be array of numbers but got array containing string');
});

test('type predicates and conversions', () => {
  assert.equal(json('type_name', set()), '"set"');
  assert.equal(json('is_number', '1'), 'false');
  assert.equal(json('to_number', '-12.5e1'), '-125');
  assert.equal(json('to_number', true), '1');
  assert.equal(json('to_number', null), '0');
  fails('to_number', ['broken'], 'eval_builtin_error', 'to_number: strconv.ParseFloat: parsing "broken": invalid syntax');
});

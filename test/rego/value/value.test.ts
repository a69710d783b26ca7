import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BigNum,
  RegoObject,
  RegoSet,
  compare,
  equals,
  fromJSON,
  keyOf,
  num,
  parseJSON,
  parseNumber,
  stringifyJSON,
  toJSON,
  typeName,
  type Value,
} from '../../../src/rego/value/index.js';

const n = (s: string) => parseNumber(s)!;

test('OPA order: null < boolean < number < string < array < object < set', () => {
  const ordered: Value[] = [
    null,
    false,
    true,
    -1,
    n('0.5'),
    2,
    n('12345678901234567890123'),
    '',
    'a',
    'b',
    [],
    [1],
    [1, 2],
    [2],
    new RegoObject(),
    RegoObject.fromRecord({ a: 1 }),
    RegoObject.fromRecord({ a: 2 }),
    RegoObject.fromRecord({ b: 0 }),
    new RegoSet(),
    new RegoSet([1]),
    new RegoSet([1, 2]),
    new RegoSet([2]),
  ];
  for (let i = 0; i < ordered.length; i++)
    for (let j = 0; j < ordered.length; j++)
      assert.equal(Math.sign(compare(ordered[i]!, ordered[j]!)), Math.sign(i - j), `${i} vs ${j}`);
});

test('strings compare by code point, as Go compares UTF-8 bytes', () => {
  assert.ok(compare('\uffff', '😀') < 0);
  assert.ok(compare('a', 'ab') < 0);
});

test('numbers are equal by value across representations and keep big values exact', () => {
  assert.equal(n('1.0'), 1);
  assert.equal(n('1e2'), 100);
  assert.equal(n('-0'), 0);
  const big = n('28857836529306024611913');
  assert.ok(big instanceof BigNum);
  assert.equal(equals(big, n('28857836529306024611912')), false);
  assert.equal(equals(big, n('2885783652930602461191.3e1')), true);
  assert.equal(keyOf(big), keyOf(n('28857836529306024611913.000')));
  assert.equal(stringifyJSON(big), '28857836529306024611913');
  assert.equal(compare(n('9007199254740993'), 9007199254740992), 1);
  assert.equal(stringifyJSON(n('0.10000000000000000000001')), '0.10000000000000000000001');
});

test('arithmetic follows OPA: exact integers, 64-bit-mantissa floats printed shortest', () => {
  assert.equal(num.add(1, 2), 3);
  assert.equal(stringifyJSON(num.add(n('9007199254740993'), 1)), '9007199254740994');
  assert.equal(stringifyJSON(num.multiply(n('4294967296'), n('4294967296'))), '18446744073709551616');
  assert.equal(num.add(0.1, 0.2), 0.3);
  assert.equal(num.divide(13, 4), 3.25);
  assert.equal(num.divide(15.3, 3), 5.1);
  assert.equal(stringifyJSON(num.divide(1, 3)!), '0.33333333333333333334');
  assert.equal(num.divide(1, 0), undefined);
  assert.equal(num.remainder(-7, 3), -1);
  assert.equal(num.remainder(7.5, 2), 'modulo on floating-point number');
  assert.equal(num.remainder(1, 0), 'modulo by zero');
  assert.equal(num.round(-2.5), -3);
  assert.equal(num.round(2.5), 3);
  assert.equal(num.floor(-1.5), -2);
  assert.equal(num.ceil(-1.5), -1);
});

test('sets and objects use structural keys of any type', () => {
  const s = new RegoSet([[1, 2], RegoObject.fromRecord({ a: 1 }), '\u0000x', 1]);
  assert.ok(s.has([1, 2]));
  assert.ok(s.has(RegoObject.fromRecord({ a: 1 })));
  assert.ok(s.has(n('1.0')));
  assert.ok(!s.has('1'));
  assert.ok(s.has('\u0000x'));
  s.add([1, 2]);
  assert.equal(s.size, 4);
  const o = new RegoObject([
    [1, 'one'],
    ['1', 'string one'],
    [[1], 'array'],
  ]);
  assert.equal(o.get(1), 'one');
  assert.equal(o.get('1'), 'string one');
  assert.equal(o.get([1]), 'array');
  assert.deepEqual(o.keys(), [1, '1', [1]]);
  assert.ok(equals(new RegoSet([1, 2]), new RegoSet([2, 1])));
  const withNull = new RegoObject([
    [null, 'n'],
    [false, 'f'],
  ]);
  assert.deepEqual(withNull.keys(), [null, false]);
  assert.equal(withNull.get(null), 'n');
  assert.equal(stringifyJSON(withNull), '{"false":"f","null":"n"}');
  assert.equal(keyOf(['a', 1]), keyOf(['a', n('1.0')]));
  assert.notEqual(keyOf(['a', 1]), keyOf(['a', '1']));
  assert.notEqual(keyOf([[1, 2], 3]), keyOf([1, [2, 3]]));
});

test('JSON in and out: sets as sorted arrays, non-string keys as JSON text, exact numbers', () => {
  const v = parseJSON('{"b":[1,2.50,12345678901234567890],"a":{"x":null}}');
  assert.equal(stringifyJSON(v), '{"a":{"x":null},"b":[1,2.5,12345678901234567890]}');
  const o = new RegoObject([
    [new RegoSet(['b', 'a']), new RegoSet([3, 1])],
    [2, true],
  ]);
  assert.equal(stringifyJSON(o), '{"2":true,"[\\"a\\",\\"b\\"]":[1,3]}');
  assert.deepEqual(toJSON(o), { '2': true, '["a","b"]': [1, 3] });
  assert.ok(equals(fromJSON({ a: [1, 2n ** 70n] }), parseJSON('{"a":[1,1180591620717411303424]}')));
  assert.throws(() => parseJSON('{"a":1,}1234567890123456789'), SyntaxError);
  assert.equal(stringifyJSON(parseJSON('[1, {"a": "b"}]'), 2), '[\n  1,\n  {\n    "a": "b"\n  }\n]');
});

test('typeName uses OPA names', () => {
  assert.deepEqual(
    [null, true, 1, n('1e400'), 's', [], new RegoObject(), new RegoSet()].map(typeName),
    ['null', 'boolean', 'number', 'number', 'string', 'array', 'object', 'set'],
  );
});

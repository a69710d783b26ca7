import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fails, json, parseJSON, set } from './call.js';

const cases: [string, unknown[], string][] = [
  ['concat', [', ', ['a', 'b', 'c']], '"a, b, c"'],
  ['concat', ['-', set('b', 'a')], '"a-b"'],
  ['format_int', [255, 16], '"ff"'],
  ['format_int', [-10.9, 2], '"-1010"'],
  ['indexof', ['héllo', 'l'], '2'],
  ['indexof_n', ['abcabc', 'bc'], '[1,4]'],
  ['substring', ['héllo wörld', 6, -1], '"wörld"'],
  ['substring', ['abc', 5, 1], '""'],
  ['strings.count', ['cheese', 'e'], '3'],
  ['split', ['a,b,,c', ','], '["a","b","","c"]'],
  ['split', ['añb', ''], '["a","ñ","b"]'],
  ['replace', ['aaa', 'a', 'bb'], '"bbbbbb"'],
  ['strings.replace_n', [{ a: 'b', b: 'c' }, 'ab'], '"bc"'],
  ['trim', ['xxhixx', 'x'], '"hi"'],
  ['trim_left', ['aabca', 'a'], '"bca"'],
  ['trim_right', ['acbaa', 'a'], '"acb"'],
  ['trim_prefix', ['prefix-rest', 'prefix-'], '"rest"'],
  ['trim_suffix', ['rest.txt', '.txt'], '"rest"'],
  ['trim_space', ['\t\u00a0 hi \n'], '"hi"'],
  ['upper', ['straße'], '"STRAßE"'],
  ['lower', ['ΑΒΓ'], '"αβγ"'],
  ['strings.reverse', ['héllo'], '"olléh"'],
  ['strings.any_prefix_match', [['abc', 'xyz'], 'xy'], 'true'],
  ['strings.any_suffix_match', ['abc', set('zz', 'bc')], 'true'],
  ['contains', ['abc', 'b'], 'true'],
  ['startswith', ['abc', 'ab'], 'true'],
  ['endswith', ['abc', 'ab'], 'false'],
];

test('string builtins follow Go semantics (runes, Go case mapping, Replacer order)', () => {
  for (const [name, args, want] of cases) assert.equal(json(name, ...args), want, `${name}(${JSON.stringify(args)})`);
});

test('sprintf reproduces Go fmt verbs, flags and in-band errors', () => {
  const f = (format: string, ...args: unknown[]) => JSON.parse(json('sprintf', format, args)) as string;
  assert.equal(f('%s has %d items (%v)', 'cart', 3, [1, 'a']), 'cart has 3 items ([1, "a"])');
  assert.equal(f('%05d|%-4d|%+d|% d', 42, 7, 5, 5), '00042|7   |+5| 5');
  assert.equal(f('%x %X %o %b %#x', 255, 255, 8, 5, 255), 'ff FF 10 101 0xff');
  assert.equal(f('%.2f %e %g %v', 3.14159, 123456.789, 0.00001234, 1234567.5), '3.14 1.234568e+05 1.234e-05 1.2345675e+06');
  assert.equal(f('%.0f %.0f %.1f', 0.5, 2.5, 0.05), '0 2 0.1');
  assert.equal(f('%8.3f|%-8.2f|', 3.14159, 2.5), '   3.142|2.50    |');
  assert.equal(f('%v %v %v', { a: 1 }, set(2, 1), null), '{"a": 1} {1, 2} null');
  assert.equal(f('%q %x', 'a"b', 'hi'), '"a\\"b" 6869');
  assert.equal(f('%d', 'x'), '%!d(string=x)');
  assert.equal(f('%s %d', 'a'), 'a %!d(MISSING)');
  assert.equal(f('%d', 1, 2), '1%!(EXTRA int=2)');
  assert.equal(f('%t', true), '%!t(string=true)');
  assert.equal(f('100%%'), '100%');
  assert.equal(f('%v %d', parseJSON('12345678901234567890'), parseJSON('-9223372036854775809')), '12345678901234567890 -9223372036854775809');
  assert.equal(f('%d', 1.5), '%!d(float64=1.5)');
});

test('string operand errors use OPA wording', () => {
  fails('concat', [',', [1]], 'eval_type_error', 'concat: operand 2 must be array of strings but got array containing number');
  fails('strings.any_suffix_match', [1, 'a'], 'eval_type_error', 'strings.any_suffix_match: operand 1 must be one of {string, set, array} but got number');
  fails('strings.any_suffix_match', [['a'], [1]], 'eval_type_error', 'strings.any_suffix_match: operand 2 must be array of strings but got array containing number');
  fails('strings.replace_n', [{ a: 1 }, 'x'], 'eval_type_error', 'strings.replace_n: operand 1 non-string value found in pattern object');
  fails('strings.replace_n', [{ a: 'b' }, 1], 'eval_type_error', 'strings.replace_n: operand 2 must be string but got number');
  fails('indexof', ['abc', ''], 'eval_builtin_error', 'indexof: empty search character');
  fails('substring', ['abc', -1, 1], 'eval_builtin_error', 'substring: negative offset');
  fails('substring', ['abc', 1.5, 1], 'eval_type_error', 'substring: operand 2 must be integer number but got floating-point number');
  fails('format_int', [1, 3], 'eval_type_error', 'format_int: operand 2 must be one of {2, 8, 10, 16}');
});

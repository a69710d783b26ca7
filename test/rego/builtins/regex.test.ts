import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fails, json } from './call.js';

test('regexes have RE2 (Go) semantics', () => {
  assert.equal(json('regex.match', '^[a-z]+\\d$', 'abc1'), 'true');
  assert.equal(json('regex.match', '(?i)HELLO', 'say hello'), 'true');
  assert.equal(json('regex.is_valid', '(a'), 'false');
  assert.equal(json('regex.is_valid', 7), 'false');
  assert.equal(json('regex.split', 'a', 'banana'), '["b","n","n",""]');
  assert.equal(json('regex.split', ',', ''), '[""]');
  assert.equal(json('regex.find_n', '[0-9]+', 'a1b22c333', 2), '["1","22"]');
  assert.equal(json('regex.find_n', 'a*', 'baaa', -1), '["","aaa"]');
  assert.equal(json('regex.find_all_string_submatch_n', '(\\w)(\\d)?', 'a1b', -1), '[["a1","a","1"],["b","b",""]]');
  assert.equal(json('regex.replace', 'abc-abc', 'b(c)', '[$1]'), '"a[c]-a[c]"');
  assert.equal(json('regex.replace', 'x', 'x', '$1y${1}z$$'), '"z$"');
  assert.equal(json('regex.replace', 'ab', '(?P<first>a)', '<${first}>'), '"<a>b"');
  assert.equal(json('regex.template_match', 'urn:foo:{.*}', 'urn:foo:bar:baz', '{', '}'), 'true');
  assert.equal(json('regex.template_match', 'urn:foo.bar:{[a-z]+}', 'urn:foo-bar:x', '{', '}'), 'false');
  // catastrophic for a backtracking engine, linear for RE2
  assert.equal(json('regex.match', '^(a+)+$', 'a'.repeat(5000) + '!'), 'false');
});

test('regex errors carry Go parse messages', () => {
  fails('regex.match', ['(', 'x'], 'eval_builtin_error', 'regex.match: error parsing regexp: missing closing ): `(`');
  fails('regex.template_match', ['urn:{.*', 'x', '{', '}'], 'eval_builtin_error', 'regex.template_match: unbalanced braces in "urn:{.*"');
});

test('glob.match follows gobwas/glob with delimiters', () => {
  assert.equal(json('glob.match', '*.github.com', [], 'api.github.com'), 'true');
  assert.equal(json('glob.match', '*.github.com', [], 'api.cdn.github.com'), 'false');
  assert.equal(json('glob.match', '**.github.com', [], 'api.cdn.github.com'), 'true');
  assert.equal(json('glob.match', '*.github.com', null, 'api.cdn.github.com'), 'true');
  assert.equal(json('glob.match', 'a/*/c', ['/'], 'a/b/c'), 'true');
  assert.equal(json('glob.match', '{a,{b,c}}?', [], 'cx'), 'true');
  assert.equal(json('glob.match', '[!0-9]', [], '5'), 'false');
  assert.equal(json('glob.match', '[a\\-z]', [], '-'), 'true');
  assert.equal(json('glob.match', '\\*', [], '*'), 'true');
  assert.equal(json('glob.quote_meta', '*.github.com?[x]'), '"\\\\*.github.com\\\\?\\\\[x\\\\]"');
  fails('glob.match', ['[abc', [], 'a'], 'eval_builtin_error', 'glob.match: unexpected end of input');
  fails('glob.match', ['a', ['ab'], 'a'], 'eval_type_error', 'glob.match: operand 2 must be array of runes but got array containing string');
});

test('regex.globs_match decides whether two glob-like patterns share a string', () => {
  assert.equal(json('regex.globs_match', 'a.a.[0-9]+z', '.b.b2359825792*594823z'), 'true');
  assert.equal(json('regex.globs_match', '[a-z]+', '[0-9]*'), 'false');
  assert.equal(json('regex.globs_match', '[a-z]+\\[[0-9]+\\]', 'foo\\[1\\]'), 'true');
  fails('regex.globs_match', ['[abc', 'a'], 'eval_builtin_error', 'regex.globs_match: input:[abc, pos:4, found [ without matching ]: the input provided is invalid');
  fails('regex.globs_match', [']', 'a'], 'eval_builtin_error', "regex.globs_match: input:], pos:1, set-close ']' with no preceding '[': the input provided is invalid");
  fails('regex.globs_match', ['[z-a]', 'a'], 'eval_builtin_error', "regex.globs_match: input:[z-a], pos:4, range is out of order: 'a' comes before 'z' in Unicode: the input provided is invalid");
});

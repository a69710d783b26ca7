import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fails, json, set } from './call.js';

test('base64, base64url, hex and URL query encodings', () => {
  assert.equal(json('base64.encode', 'héllo'), '"aMOpbGxv"');
  assert.equal(json('base64.decode', 'aMOpbGxv'), '"héllo"');
  assert.equal(json('base64.is_valid', 'aGk'), 'false');
  assert.equal(json('base64url.encode', '??>'), '"Pz8-"');
  assert.equal(json('base64url.encode', 'a'), '"YQ=="');
  assert.equal(json('base64url.encode_no_pad', 'a'), '"YQ"');
  assert.equal(json('base64url.decode', 'YQ'), '"a"');
  assert.equal(json('hex.encode', 'hi'), '"6869"');
  assert.equal(json('hex.decode', '6869'), '"hi"');
  assert.equal(json('urlquery.encode', 'a b&c=d/é'), '"a+b%26c%3Dd%2F%C3%A9"');
  assert.equal(json('urlquery.decode', 'a+b%26c'), '"a b&c"');
  assert.equal(json('urlquery.encode_object', { b: ['x y', 'z'], a: 'q&', c: set('2', '1') }), '"a=q%26&b=x+y&b=z&c=1&c=2"');
  assert.equal(json('urlquery.decode_object', 'a=1&b=2&a=3&c'), '{"a":["1","3"],"b":["2"],"c":[""]}');
  fails('base64.decode', ['aGk'], 'eval_builtin_error', 'base64.decode: illegal base64 data at input byte 3');
  fails('hex.decode', ['zz'], 'eval_builtin_error', "hex.decode: encoding/hex: invalid byte: U+007A 'z'");
  fails('hex.decode', ['abc'], 'eval_builtin_error', 'hex.decode: encoding/hex: odd length hex string');
  fails('urlquery.decode', ['%zz'], 'eval_builtin_error', 'urlquery.decode: invalid URL escape "%zz"');
});

test('JSON and YAML as OPA marshals them', () => {
  assert.equal(json('json.marshal', { b: [1, set(2)], a: '<&>' }), '"{\\"a\\":\\"\\\\u003c\\\\u0026\\\\u003e\\",\\"b\\":[1,[2]]}"');
  const pretty = JSON.parse(json('json.marshal_with_options', { a: [1] }, { indent: '  ', prefix: '>' }));
  assert.equal(pretty, '>{\n>  "a": [\n>    1\n>  ]\n>}');
  assert.equal(JSON.parse(json('json.marshal_with_options', { a: 1 }, { pretty: false, indent: ' ' })), '{"a":1}');
  fails('json.marshal_with_options', [1, { nope: true }], 'eval_type_error', 'json.marshal_with_options: operand 2 object contained unknown key nope');
  assert.equal(json('json.unmarshal', '{"n": 123456789012345678901234, "f": 1.50}'), '{"f":1.5,"n":123456789012345678901234}');
  assert.equal(json('json.is_valid', '{"a":'), 'false');
  assert.equal(JSON.parse(json('yaml.marshal', { b: [1, 2], a: 'x' })), 'a: x\nb:\n- 1\n- 2\n');
  assert.equal(json('yaml.unmarshal', 'a: 123456789012345678901\nb: [x, true]'), '{"a":123456789012345678901,"b":["x",true]}');
  assert.equal(json('yaml.is_valid', 'a: [1'), 'false');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, fails, json } from './call.js';
import { createHmac, generateKeyPairSync } from 'node:crypto';

test('units.parse and units.parse_bytes', () => {
  assert.equal(json('units.parse', '10Ki'), '10240');
  assert.equal(json('units.parse', '1.5M'), '1500000');
  assert.equal(json('units.parse', '250m'), '0.25');
  assert.equal(json('units.parse', '10Ei'), '11529215046068469760');
  assert.equal(json('units.parse', '1e3k'), '1000000');
  assert.equal(json('units.parse_bytes', '1.5KiB'), '1536');
  assert.equal(json('units.parse_bytes', '"12MB"'), '12000000');
  fails('units.parse', ['Gi'], 'eval_builtin_error', 'units.parse: units.parse: no amount provided');
  fails('units.parse', ['1 Gi'], 'eval_builtin_error', 'units.parse: units.parse: spaces not allowed in resource strings');
  fails('units.parse', ['1.2.3'], 'eval_builtin_error', 'units.parse: units.parse: could not parse amount to a number');
  fails('units.parse', ['1x'], 'eval_builtin_error', 'units.parse: units.parse: unit x not recognized');
  fails('units.parse_bytes', ['1xb'], 'eval_builtin_error', 'units.parse_bytes: units.parse_bytes: byte unit xb not recognized');
});

test('semver', () => {
  assert.equal(json('semver.is_valid', '1.0.0-alpha.1+build'), 'true');
  assert.equal(json('semver.is_valid', 'v1.0.0'), 'false');
  assert.equal(json('semver.is_valid', 1), 'false');
  assert.equal(json('semver.compare', '1.0.0-alpha', '1.0.0-alpha.1'), '-1');
  assert.equal(json('semver.compare', '1.0.0-rc.1', '1.0.0-beta.11'), '1');
  assert.equal(json('semver.compare', '2.0.0+a', '2.0.0+b'), '0');
  fails('semver.compare', ['1', '1.0.0'], 'eval_builtin_error', 'semver.compare: operand 1: string "1" is not a valid SemVer');
});

test('uuid.parse reads versions 1, 2, 6 and 7 like Go', () => {
  assert.equal(
    json('uuid.parse', 'b01d0062-a116-11ee-822b-7ab0b9e5e0c0'),
    '{"clocksequence":555,"macvariables":"local:unicast","nodeid":"7a-b0-b9-e5-e0-c0","time":1703282931110717000,"variant":"RFC4122","version":1}',
  );
  assert.equal(
    json('uuid.parse', '000003e8-a129-21ee-ae00-325096b39f47'),
    '{"clocksequence":11776,"domain":"Person","id":1000,"macvariables":"local:unicast","nodeid":"32-50-96-b3-9f-47","time":1703290796079613600,"variant":"RFC4122","version":2}',
  );
  assert.equal(json('uuid.parse', '1EC9414C-232A-6B00-B3C8-9E6BDECED846'), '{"time":1645557742000000000,"variant":"RFC4122","version":6}');
  assert.equal(json('uuid.parse', '{a6342df8-7801-469c-b3f3-c5317a0ebdaa}'), '{"variant":"RFC4122","version":4}');
  assert.equal(json('uuid.parse', 'not-valid'), 'undefined');
});

test('hashes and HMACs', () => {
  assert.equal(json('crypto.sha256', 'abc'), '"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"');
  assert.equal(json('crypto.md5', ''), '"d41d8cd98f00b204e9800998ecf8427e"');
  assert.equal(json('crypto.hmac.sha512', 'msg', 'key'), JSON.stringify(createHmac('sha512', 'key').update('msg').digest('hex')));
  assert.equal(json('crypto.hmac.equal', 'abc', 'abc'), 'true');
  assert.equal(json('crypto.hmac.equal', 'abc', 'abd'), 'false');
});

test('opa.runtime exposes the evaluation environment', () => {
  const v = call('opa.runtime', [], { env: { HOME: '/root' } });
  assert.equal(JSON.stringify((v as { get(k: string): unknown }).get('env') && json('object.get', v, ['env', 'HOME'], null)), '"\\"/root\\""');
});

test('crypto.x509.parse_rsa_private_key returns the key as a JWK', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const pkcs1 = privateKey.export({ format: 'pem', type: 'pkcs1' }).toString();
  const want = privateKey.export({ format: 'jwk' });
  for (const input of [pkcs1, Buffer.from(pkcs1).toString('base64')]) {
    const jwk = JSON.parse(json('crypto.x509.parse_rsa_private_key', input));
    assert.deepEqual(jwk, want);
    assert.deepEqual(Object.keys(jwk).sort(), ['d', 'dp', 'dq', 'e', 'kty', 'n', 'p', 'q', 'qi']);
  }
  assert.equal(json('crypto.x509.parse_rsa_private_key', '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----'), 'null');
  fails('crypto.x509.parse_rsa_private_key', [''], 'eval_builtin_error', 'crypto.x509.parse_rsa_private_key: input PEM data was empty');
});

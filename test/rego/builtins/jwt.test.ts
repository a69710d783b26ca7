import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { call, fails, json } from './call.js';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ed = generateKeyPairSync('ed25519');
const jwk = (k: import('node:crypto').KeyObject, extra: Record<string, string> = {}) => ({ ...k.export({ format: 'jwk' }), ...extra });
const pem = (k: import('node:crypto').KeyObject) => k.export({ format: 'pem', type: 'spki' }).toString();

function sign(header: object, payload: object, key: object): string {
  return call('io.jwt.encode_sign', [header, payload, key]) as string;
}

test('tokens signed with each family verify with the matching key and not with another', () => {
  const cases: [string, object, string][] = [
    ['RS256', jwk(rsa.privateKey), pem(rsa.publicKey)],
    ['PS384', jwk(rsa.privateKey), pem(rsa.publicKey)],
    ['ES256', jwk(ec.privateKey), pem(ec.publicKey)],
    ['EdDSA', jwk(ed.privateKey), pem(ed.publicKey)],
  ];
  for (const [alg, priv, pub] of cases) {
    const token = sign({ alg, typ: 'JWT' }, { sub: 'alice' }, priv);
    assert.equal(json(`io.jwt.verify_${alg.toLowerCase()}`, token, pub), 'true', alg);
    assert.equal(json(`io.jwt.verify_${alg.toLowerCase()}`, token, pem(generateKeyPairSync('ed25519').publicKey)), 'false', alg);
  }
  const hs = sign({ alg: 'HS256' }, { sub: 'alice' }, { kty: 'oct', k: Buffer.from('secret').toString('base64url') });
  assert.equal(json('io.jwt.verify_hs256', hs, 'secret'), 'true');
  assert.equal(json('io.jwt.verify_hs256', hs, 'wrong'), 'false');
});

test('a JWKS key is chosen by kid', () => {
  const token = sign({ alg: 'RS256', kid: 'k2' }, { sub: 'alice' }, jwk(rsa.privateKey));
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = JSON.stringify({ keys: [jwk(other.publicKey, { kid: 'k1', alg: 'RS256' }), jwk(rsa.publicKey, { kid: 'k2', alg: 'RS256' })] });
  assert.equal(json('io.jwt.verify_rs256', token, jwks), 'true');
  const swapped = JSON.stringify({ keys: [jwk(other.publicKey, { kid: 'k2' })] });
  assert.equal(json('io.jwt.verify_rs256', token, swapped), 'false');
});

test('decode_verify checks signature, alg, iss, aud, exp and nbf at the evaluation time', () => {
  const key = { kty: 'oct', k: Buffer.from('secret').toString('base64url') };
  const token = sign({ alg: 'HS256', typ: 'JWT' }, { iss: 'me', aud: ['api'], exp: 2000, nbf: 1000 }, key);
  const at = (sec: number) => BigInt(sec) * 1_000_000_000n;
  const verify = (constraints: object, sec: number) =>
    JSON.stringify((call('io.jwt.decode_verify', [token, constraints], { timeNs: at(sec) }) as unknown[])[0]);
  assert.equal(verify({ secret: 'secret', iss: 'me', aud: 'api' }, 1500), 'true');
  assert.equal(verify({ secret: 'secret', aud: 'api' }, 2000), 'false');
  assert.equal(verify({ secret: 'secret', aud: 'api' }, 999), 'false');
  assert.equal(verify({ secret: 'secret' }, 1500), 'false');
  assert.equal(verify({ secret: 'secret', aud: 'api', iss: 'you' }, 1500), 'false');
  assert.equal(verify({ secret: 'secret', aud: 'api', alg: 'HS512' }, 1500), 'false');
  assert.equal(verify({ secret: 'secret', aud: 'api', time: 1500e9 }, 1), 'true');
  assert.equal(verify({ secret: 'wrong', aud: 'api' }, 1500), 'false');
  fails('io.jwt.decode_verify', [token, {}], 'eval_builtin_error', 'io.jwt.decode_verify: no key constraint');
  fails('io.jwt.decode_verify', [token, { secret: 's', cert: pem(rsa.publicKey) }], 'eval_builtin_error', 'io.jwt.decode_verify: duplicate key constraints');
  fails('io.jwt.decode_verify', [token, { secret: 's', foo: 1 }], 'eval_builtin_error', 'io.jwt.decode_verify: unknown token validation constraint: foo');
});

test('decode splits a token and reports malformed ones', () => {
  const token = sign({ alg: 'HS256', typ: 'JWT' }, { sub: 'x' }, { kty: 'oct', k: 'c2VjcmV0' });
  const [header, payload, sig] = JSON.parse(json('io.jwt.decode', token));
  assert.deepEqual(header, { alg: 'HS256', typ: 'JWT' });
  assert.deepEqual(payload, { sub: 'x' });
  assert.match(sig, /^[0-9a-f]{64}$/);
  fails('io.jwt.decode', ['abc'], 'eval_builtin_error', 'io.jwt.decode: encoded JWT had no period separators');
  fails('io.jwt.decode', ['a.b'], 'eval_builtin_error', 'io.jwt.decode: encoded JWT must have 3 sections, found 2');
  fails('io.jwt.encode_sign_raw', ['{"alg":"none"}', '{}', '{"kty":"oct","k":"c2VjcmV0"}'], 'eval_builtin_error', 'io.jwt.encode_sign_raw: unknown JWS algorithm: none');
});

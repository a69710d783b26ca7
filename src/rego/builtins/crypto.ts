import { createHash, createHmac, createPrivateKey, timingSafeEqual } from 'node:crypto';
import { fromJSON, type Value } from '../value/index.js';
import { BuiltinError, defineBuiltins } from './registry.js';
import { str } from './operands.js';
import { T, anyObject } from './types.js';

/** Hashes and HMACs of a string's UTF-8 bytes, hex-encoded as OPA returns them. */

const hash = (algorithm: string) => (s: string) => createHash(algorithm).update(s, 'utf8').digest('hex');
const hmac = (algorithm: string) => (s: string, key: string) =>
  createHmac(algorithm, Buffer.from(key, 'utf8')).update(s, 'utf8').digest('hex');

/** Go's hmac.Equal: constant time, false for different lengths. */
export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

const PRIVATE_KEY_BLOCK = /-----BEGIN ((?:RSA |EC )?PRIVATE KEY)-----[\s\S]*?-----END \1-----/g;

/**
 * crypto.x509.parse_rsa_private_key: the first private key of PEM (or base64-encoded PEM) data as
 * a JWK object, null when the data holds no private key block.
 */
function firstPrivateKeyJWK(input: string): Value {
  if (input === '') throw new BuiltinError('input PEM data was empty');
  let pem = input;
  if (!pem.startsWith('-----BEGIN')) {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(pem) || pem.length % 4 !== 0) throw new BuiltinError('illegal base64 data at input byte 0');
    pem = Buffer.from(pem, 'base64').toString('utf8');
  }
  const block = pem.match(PRIVATE_KEY_BLOCK)?.[0];
  if (block === undefined) return null;
  try {
    return fromJSON(createPrivateKey(block).export({ format: 'jwk' }));
  } catch (e) {
    throw new BuiltinError(`failed to parse private key: ${(e as Error).message}`);
  }
}

export const cryptoBuiltins = defineBuiltins(
  {
    name: 'crypto.x509.parse_rsa_private_key',
    decl: T.fn([T.string], anyObject),
    impl: ([s]) => firstPrivateKeyJWK(str(s!)),
  },
  ...(
    [
      ['crypto.md5', 'md5'],
      ['crypto.sha1', 'sha1'],
      ['crypto.sha256', 'sha256'],
    ] as const
  ).map(([name, algorithm]) => ({
    name,
    decl: T.fn([T.string], T.string),
    impl: ([s]: readonly import('../value/index.js').Value[]) => hash(algorithm)(str(s!)),
  })),
  ...(
    [
      ['crypto.hmac.md5', 'md5'],
      ['crypto.hmac.sha1', 'sha1'],
      ['crypto.hmac.sha256', 'sha256'],
      ['crypto.hmac.sha512', 'sha512'],
    ] as const
  ).map(([name, algorithm]) => ({
    name,
    decl: T.fn([T.string, T.string], T.string),
    impl: ([s, key]: readonly import('../value/index.js').Value[]) => hmac(algorithm)(str(s!), str(key!)),
  })),
  {
    name: 'crypto.hmac.equal',
    decl: T.fn([T.string, T.string], T.boolean),
    impl: ([a, b]) => constantTimeEqual(Buffer.from(str(a!), 'utf8'), Buffer.from(str(b!), 'utf8')),
  },
);

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { defineBuiltins } from './registry.js';
import { str } from './operands.js';
import { T } from './types.js';

/** Hashes and HMACs of a string's UTF-8 bytes, hex-encoded as OPA returns them. */

const hash = (algorithm: string) => (s: string) => createHash(algorithm).update(s, 'utf8').digest('hex');
const hmac = (algorithm: string) => (s: string, key: string) =>
  createHmac(algorithm, Buffer.from(key, 'utf8')).update(s, 'utf8').digest('hex');

/** Go's hmac.Equal: constant time, false for different lengths. */
export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export const cryptoBuiltins = defineBuiltins(
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

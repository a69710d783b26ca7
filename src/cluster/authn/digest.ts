/**
 * Credentials are kept in memory only as keyed digests: HMAC-SHA-256 under a key drawn at process
 * start, so a heap dump holds neither the secrets nor anything precomputable from them. Lookups
 * go by digest; password checks compare digests in constant time.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const processKey = randomBytes(32);

export function credentialDigest(secret: string): Buffer {
  return createHmac('sha256', processKey).update(secret, 'utf8').digest();
}

/** A map key for a digest. */
export const digestKey = (digest: Buffer): string => digest.toString('base64');

export function digestsEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

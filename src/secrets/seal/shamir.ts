/**
 * The Shamir seal: the 32-byte unseal key is split into `secret_shares` shares of which
 * `secret_threshold` recombine it (shamir-secret-sharing: GF(2^8), each share = 32 bytes + the
 * x-coordinate byte, as Vault's). With one share, the share is the key itself.
 */
import { timingSafeEqual } from 'node:crypto';
import { combine, split } from 'shamir-secret-sharing';
import { InvalidRequestError } from '../errors.js';

export interface SealConfig {
  readonly type: 'shamir';
  readonly secret_shares: number;
  readonly secret_threshold: number;
}

export const SEAL_CONFIG_PATH = 'core/seal-config';

/** Vault's validation of `sys/init` parameters, with its messages. */
export function validateSealConfig(shares: number, threshold: number): SealConfig {
  if (!Number.isInteger(shares) || shares < 1) throw new InvalidRequestError('shares must be at least one');
  if (!Number.isInteger(threshold) || threshold < 1) throw new InvalidRequestError('threshold must be at least one');
  if (shares > 1 && threshold === 1) throw new InvalidRequestError('threshold must be greater than one for multiple shares');
  if (shares > 255) throw new InvalidRequestError('shares must be less than 256');
  if (threshold > 255) throw new InvalidRequestError('threshold must be less than 256');
  if (threshold > shares) throw new InvalidRequestError('threshold cannot be larger than shares');
  return { type: 'shamir', secret_shares: shares, secret_threshold: threshold };
}

// shamir-secret-sharing checks `value.constructor === Uint8Array`, so a Node Buffer (a subclass)
// is refused: hand it plain copies.
export async function splitKey(key: Uint8Array, config: SealConfig): Promise<Uint8Array[]> {
  if (config.secret_shares === 1) return [Uint8Array.from(key)];
  return split(Uint8Array.from(key), config.secret_shares, config.secret_threshold);
}

export async function combineShares(shares: readonly Uint8Array[]): Promise<Uint8Array> {
  if (shares.length === 1) return Uint8Array.from(shares[0]!);
  return combine(shares.map((share) => Uint8Array.from(share)));
}

/**
 * A key given as hex (used when it decodes to 16..33 bytes) or standard base64, as Vault accepts
 * on `sys/unseal` and `sys/generate-root/update`.
 */
export function decodeKey(key: string): Uint8Array {
  if (/^[0-9a-fA-F]+$/.test(key) && key.length % 2 === 0) {
    const bytes = Buffer.from(key, 'hex');
    if (bytes.length >= 16 && bytes.length <= 33) return bytes;
  }
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(key) && key.length % 4 === 0) {
    const bytes = Buffer.from(key, 'base64');
    if (bytes.length > 0) return bytes;
  }
  throw new InvalidRequestError("'key' must be a valid hex or base64 string");
}

/** Shares handed in one by one toward a threshold (unseal, generate-root); a repeated share is noticed. */
export class ShareCollector {
  private shares: Uint8Array[] = [];

  get progress(): number {
    return this.shares.length;
  }

  /** Add a share; false if the same share was already given. */
  add(share: Uint8Array): boolean {
    for (const existing of this.shares) {
      if (existing.length === share.length && timingSafeEqual(existing, share)) return false;
    }
    this.shares.push(Uint8Array.from(share));
    return true;
  }

  take(): Uint8Array[] {
    const shares = this.shares;
    this.shares = [];
    return shares;
  }

  reset(): void {
    for (const share of this.shares) share.fill(0);
    this.shares = [];
  }
}

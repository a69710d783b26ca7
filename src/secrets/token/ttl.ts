/**
 * Vault's TTL arithmetic (framework.CalculateTTL): a periodic token is always renewed to its
 * period (capped by the system max); otherwise the increment (or the backend's TTL, or the mount's
 * default) is capped so that the token never outlives `start + maxTTL`.
 */
import { formatDurationSeconds } from '../../common/duration.js';
import { InvalidRequestError } from '../errors.js';

export interface TtlInput {
  /** Seconds asked for now (renew `increment`); 0: use `backendTtl`, else the mount default. */
  readonly increment: number;
  readonly backendTtl: number;
  readonly period: number;
  /** The backend's own max (role/user `token_max_ttl`); 0: none. */
  readonly backendMaxTtl: number;
  readonly explicitMaxTtl: number;
  /** When the token was created (ms since epoch). */
  readonly start: number;
  readonly now: number;
  readonly defaultTtl: number;
  readonly maxTtl: number;
}

export function calculateTtl(input: TtlInput): { ttl: number; warnings: string[] } {
  const warnings: string[] = [];
  if (input.period > 0) {
    let ttl = input.period;
    if (ttl > input.maxTtl) {
      warnings.push(`period of ${JSON.stringify(formatDurationSeconds(ttl))} exceeded the effective max_ttl of ${JSON.stringify(formatDurationSeconds(input.maxTtl))}; period value is capped accordingly`);
      ttl = input.maxTtl;
    }
    if (input.explicitMaxTtl > 0) {
      const left = Math.floor((input.start + input.explicitMaxTtl * 1000 - input.now) / 1000);
      if (left < ttl) ttl = Math.max(0, left);
    }
    return { ttl, warnings };
  }
  let maxTtl = input.maxTtl;
  if (input.backendMaxTtl > 0 && input.backendMaxTtl < maxTtl) maxTtl = input.backendMaxTtl;
  if (input.explicitMaxTtl > 0 && input.explicitMaxTtl < maxTtl) maxTtl = input.explicitMaxTtl;
  const increment = input.increment > 0 ? input.increment : input.backendTtl > 0 ? input.backendTtl : input.defaultTtl;
  const maxValid = input.start + maxTtl * 1000;
  if (maxValid < input.now) throw new InvalidRequestError('past the max TTL, cannot renew');
  if (input.now + increment * 1000 > maxValid) {
    const ttl = Math.floor((maxValid - input.now) / 1000);
    warnings.push(`TTL of ${JSON.stringify(formatDurationSeconds(increment))} exceeded the effective max_ttl of ${JSON.stringify(formatDurationSeconds(ttl))}; TTL value is capped accordingly`);
    return { ttl, warnings };
  }
  return { ttl: increment, warnings };
}

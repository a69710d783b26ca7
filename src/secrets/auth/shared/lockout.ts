/**
 * User lock-out after repeated failed logins (Vault ≥ 1.13 defaults): after `threshold` failures
 * within `counterReset`, the principal is locked for `duration`; while locked every login —
 * correct password or not — is refused with 403 `permission denied`, and no failure is counted.
 * A successful login clears the count. Used by userpass (per username), ldap (per username) and
 * approle (per role_id); one `LoginLockout` per mount, so mounts lock out independently.
 *
 * The counts live in the server's memory (as Vault's failed-login counts do): a restart unlocks.
 */
import { PermissionDeniedError } from '../../errors.js';

export interface LockoutPolicy {
  /** Failures that lock; 0 disables lock-out. */
  readonly threshold: number;
  /** Milliseconds a lock lasts. */
  readonly durationMs: number;
  /** Milliseconds after the last failure when the count starts again from zero. */
  readonly counterResetMs: number;
}

export const DEFAULT_LOCKOUT: LockoutPolicy = { threshold: 5, durationMs: 15 * 60_000, counterResetMs: 15 * 60_000 };

interface Failures {
  count: number;
  lastFailure: number;
  lockedUntil: number;
}

export class LoginLockout {
  private readonly failures = new Map<string, Failures>();

  constructor(
    private readonly policy: LockoutPolicy = DEFAULT_LOCKOUT,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throw 403 `permission denied` when `principal` is locked out. Call before checking credentials. */
  assertNotLocked(principal: string): void {
    const entry = this.failures.get(principal);
    if (entry && entry.lockedUntil > this.now()) throw new PermissionDeniedError('token');
  }

  /** Record a failed login. */
  failed(principal: string): void {
    if (this.policy.threshold <= 0) return;
    const now = this.now();
    let entry = this.failures.get(principal);
    if (!entry || now - entry.lastFailure > this.policy.counterResetMs || (entry.lockedUntil !== 0 && entry.lockedUntil <= now)) {
      entry = { count: 0, lastFailure: now, lockedUntil: 0 };
      this.failures.set(principal, entry);
    }
    entry.count += 1;
    entry.lastFailure = now;
    if (entry.count >= this.policy.threshold) entry.lockedUntil = now + this.policy.durationMs;
    this.prune(now);
  }

  /** Record a successful login. */
  succeeded(principal: string): void {
    this.failures.delete(principal);
  }

  /** Forget stale entries so that guessing many names cannot grow the map without bound. */
  private prune(now: number): void {
    if (this.failures.size < 10_000) return;
    for (const [principal, entry] of this.failures) {
      if (entry.lockedUntil <= now && now - entry.lastFailure > this.policy.counterResetMs) this.failures.delete(principal);
    }
  }
}

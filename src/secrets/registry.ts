/**
 * Backend types by name. A mount records a type name; enabling a mount looks the type up here and
 * calls its factory with the mount's context. Several mounts of one type are independent: each
 * gets its own factory call, its own storage view and its own accessor.
 *
 * Secrets engines are listed in src/secrets/engines.ts, auth methods in src/secrets/auth/index.ts.
 */
import type { Logger } from '../common/log.js';
import type { Backend } from './framework/backend.js';
import type { MountInfo } from './logical.js';
import type { StorageView } from './storage-view.js';

/** What the core offers a backend beyond its storage. */
export interface SystemView {
  /** The mount's default TTL in seconds (its tuning, else the server's, 768h by default). */
  defaultLeaseTtl(): number;
  /** The mount's max TTL in seconds. */
  maxLeaseTtl(): number;
  /** Whether an ACL policy of that name exists (`root` and `default` always do). */
  policyExists(name: string): Promise<boolean>;
  /**
   * The server runs with strict Vault behaviour (`strict_vault = true` in its config): no
   * compatibility conveniences such as KV v2's un-prefixed writes.
   */
  readonly strictVault: boolean;
}

export interface BackendContext {
  readonly mount: MountInfo;
  /** The mount's own storage, under the barrier; nothing else is visible to the backend. */
  readonly storage: StorageView;
  readonly logger: Logger;
  readonly system: SystemView;
  /** The mount's `options` (e.g. `{version: "2"}` for KV). */
  readonly options: Readonly<Record<string, string>>;
}

export type BackendFactory = (context: BackendContext) => Backend | Promise<Backend>;

export interface BackendRegistration {
  /** The type name users enable, e.g. `userpass`, `kv`. */
  readonly type: string;
  /** Other names for the same type (e.g. `idp` for `okta`); the mount keeps the name it was enabled with. */
  readonly aliases?: readonly string[];
  readonly factory: BackendFactory;
  /** Default description shown in `sys/auth` / `sys/mounts` when the user gives none. */
  readonly description?: string;
  /** Options implied by the name used (e.g. `kv-v2` implies `{version: "2"}`). */
  readonly impliedOptions?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

export class BackendRegistry {
  private readonly byName = new Map<string, BackendRegistration>();

  constructor(registrations: Iterable<BackendRegistration> = []) {
    for (const registration of registrations) this.register(registration);
  }

  register(registration: BackendRegistration): void {
    for (const name of [registration.type, ...(registration.aliases ?? [])]) {
      if (this.byName.has(name)) throw new Error(`backend type ${JSON.stringify(name)} is registered twice`);
      this.byName.set(name, registration);
    }
  }

  get(name: string): BackendRegistration | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }
}

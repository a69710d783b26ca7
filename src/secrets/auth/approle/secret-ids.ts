/**
 * AppRole secret IDs: the model and its storage.
 *
 * A secret ID is a bearer credential, so it is never stored: entries are keyed by an HMAC of the
 * secret ID (under the mount's key), and lookups go by recomputing it. Each entry has an accessor
 * (a handle that can look it up or destroy it, but not log in) indexed the same way.
 *
 *   secret_id/<HMAC(role name)>/<HMAC(secret id)>   → SecretIdEntry
 *   accessor/<HMAC(accessor)>                       → { roleName, secretIdHmac }
 *
 * `num_uses` counts down on each login and the entry is deleted when it reaches zero; an expired
 * entry is deleted when met (and by tidy). Updates to one entry are serialised in this process so
 * that two concurrent logins cannot both spend a secret ID's last use.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { getJSON, putJSON, type StorageView } from '../../storage-view.js';

export interface SecretIdEntry {
  secretIdAccessor: string;
  /** Remaining uses; 0 = unlimited. */
  secretIdNumUses: number;
  /** Seconds from creation; 0 = never expires. */
  secretIdTtl: number;
  /** RFC 3339. */
  creationTime: string;
  /** RFC 3339; Go's zero time when it never expires. */
  expirationTime: string;
  lastUpdatedTime: string;
  metadata: Record<string, string>;
  cidrList: string[];
  tokenBoundCidrs: string[];
}

interface AccessorEntry {
  roleName: string;
  secretIdHmac: string;
}

export interface NewSecretId {
  /** A caller-chosen secret ID (custom-secret-id), else a random UUID. */
  secretId?: string;
  numUses: number;
  ttl: number;
  metadata: Record<string, string>;
  cidrList: string[];
  tokenBoundCidrs: string[];
}

export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

export class SecretIdConflictError extends Error {}

/** Serialises async work per key, in this process. */
class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const current = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => current);
    this.tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

export class SecretIdStore {
  private readonly mutex = new KeyedMutex();

  constructor(
    /** Resolves to the mount's HMAC key (created once per mount). */
    private readonly hmacKey: () => Promise<Buffer>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async hmac(value: string): Promise<string> {
    return createHmac('sha256', await this.hmacKey()).update(value).digest('hex');
  }

  /** Store a new secret ID for `roleName`; returns the secret ID and its entry. */
  async create(storage: StorageView, roleName: string, spec: NewSecretId): Promise<{ secretId: string; entry: SecretIdEntry }> {
    const secretId = spec.secretId ?? randomUUID();
    const key = await this.entryKey(roleName, secretId);
    return this.mutex.run(key, async () => {
      if (await storage.get(key)) throw new SecretIdConflictError('SecretID is already registered');
      const now = this.now();
      const entry: SecretIdEntry = {
        secretIdAccessor: randomUUID(),
        secretIdNumUses: spec.numUses,
        secretIdTtl: spec.ttl,
        creationTime: now.toISOString(),
        expirationTime: spec.ttl > 0 ? new Date(now.getTime() + spec.ttl * 1000).toISOString() : GO_ZERO_TIME,
        lastUpdatedTime: now.toISOString(),
        metadata: spec.metadata,
        cidrList: spec.cidrList,
        tokenBoundCidrs: spec.tokenBoundCidrs,
      };
      await putJSON(storage, key, entry);
      await putJSON(storage, await this.accessorKey(entry.secretIdAccessor), {
        roleName,
        secretIdHmac: key.slice(key.lastIndexOf('/') + 1),
      } satisfies AccessorEntry);
      return { secretId, entry };
    });
  }

  /** The live entry of a secret ID, or undefined (an expired one is deleted on the way). */
  async lookup(storage: StorageView, roleName: string, secretId: string): Promise<SecretIdEntry | undefined> {
    const key = await this.entryKey(roleName, secretId);
    return this.mutex.run(key, () => this.live(storage, key));
  }

  async lookupByAccessor(storage: StorageView, roleName: string, accessor: string): Promise<SecretIdEntry | undefined> {
    const index = await getJSON<AccessorEntry>(storage, await this.accessorKey(accessor));
    if (!index || index.roleName !== roleName) return undefined;
    const key = `${await this.roleDir(roleName)}${index.secretIdHmac}`;
    return this.mutex.run(key, () => this.live(storage, key));
  }

  /**
   * Spend one use of a secret ID for a login, if `admit(entry)` agrees (e.g. the client address is
   * allowed). Returns the entry as it was before this use, or undefined when the secret ID is
   * unknown, expired or refused — in which case nothing is spent.
   */
  async consume(storage: StorageView, roleName: string, secretId: string, admit: (entry: SecretIdEntry) => void): Promise<SecretIdEntry | undefined> {
    const key = await this.entryKey(roleName, secretId);
    return this.mutex.run(key, async () => {
      const entry = await this.live(storage, key);
      if (!entry) return undefined;
      admit(entry);
      if (entry.secretIdNumUses === 1) {
        await this.remove(storage, key, entry);
      } else if (entry.secretIdNumUses > 1) {
        await putJSON(storage, key, { ...entry, secretIdNumUses: entry.secretIdNumUses - 1, lastUpdatedTime: this.now().toISOString() });
      }
      return entry;
    });
  }

  async destroy(storage: StorageView, roleName: string, secretId: string): Promise<void> {
    const key = await this.entryKey(roleName, secretId);
    await this.mutex.run(key, async () => {
      const entry = await getJSON<SecretIdEntry>(storage, key);
      if (entry) await this.remove(storage, key, entry);
    });
  }

  /** Destroy by accessor; false when the accessor is unknown (for this role). */
  async destroyByAccessor(storage: StorageView, roleName: string, accessor: string): Promise<boolean> {
    const index = await getJSON<AccessorEntry>(storage, await this.accessorKey(accessor));
    if (!index || index.roleName !== roleName) return false;
    const key = `${await this.roleDir(roleName)}${index.secretIdHmac}`;
    await this.mutex.run(key, async () => {
      const entry = await getJSON<SecretIdEntry>(storage, key);
      if (entry) await this.remove(storage, key, entry);
      else await storage.delete(await this.accessorKey(accessor));
    });
    return true;
  }

  /** Accessors of the role's live secret IDs. */
  async accessors(storage: StorageView, roleName: string): Promise<string[]> {
    const dir = await this.roleDir(roleName);
    const out: string[] = [];
    for (const name of await storage.list(dir)) {
      const entry = await this.mutex.run(dir + name, () => this.live(storage, dir + name));
      if (entry) out.push(entry.secretIdAccessor);
    }
    return out.sort();
  }

  /** Delete every secret ID of a role (when the role is deleted). */
  async destroyAll(storage: StorageView, roleName: string): Promise<void> {
    const dir = await this.roleDir(roleName);
    for (const name of await storage.list(dir)) {
      await this.mutex.run(dir + name, async () => {
        const entry = await getJSON<SecretIdEntry>(storage, dir + name);
        if (entry) await this.remove(storage, dir + name, entry);
      });
    }
  }

  /** Delete expired secret IDs of every role and accessor entries that point nowhere. */
  async tidy(storage: StorageView): Promise<{ expired: number; danglingAccessors: number }> {
    let expired = 0;
    let danglingAccessors = 0;
    for (const dir of await storage.list('secret_id/')) {
      for (const name of await storage.list(`secret_id/${dir}`)) {
        const key = `secret_id/${dir}${name}`;
        await this.mutex.run(key, async () => {
          const found = await getJSON<SecretIdEntry>(storage, key);
          if (found && this.expired(found)) {
            await this.remove(storage, key, found);
            expired++;
          }
        });
      }
    }
    for (const name of await storage.list('accessor/')) {
      const index = await getJSON<AccessorEntry>(storage, `accessor/${name}`);
      if (!index) continue;
      const key = `${await this.roleDir(index.roleName)}${index.secretIdHmac}`;
      if (!(await storage.get(key))) {
        await storage.delete(`accessor/${name}`);
        danglingAccessors++;
      }
    }
    return { expired, danglingAccessors };
  }

  private expired(entry: SecretIdEntry): boolean {
    return entry.expirationTime !== GO_ZERO_TIME && Date.parse(entry.expirationTime) <= this.now().getTime();
  }

  private async live(storage: StorageView, key: string): Promise<SecretIdEntry | undefined> {
    const entry = await getJSON<SecretIdEntry>(storage, key);
    if (!entry) return undefined;
    if (this.expired(entry)) {
      await this.remove(storage, key, entry);
      return undefined;
    }
    return entry;
  }

  private async remove(storage: StorageView, key: string, entry: SecretIdEntry): Promise<void> {
    await storage.delete(await this.accessorKey(entry.secretIdAccessor));
    await storage.delete(key);
  }

  private async roleDir(roleName: string): Promise<string> {
    return `secret_id/${await this.hmac(`role:${roleName}`)}/`;
  }

  private async entryKey(roleName: string, secretId: string): Promise<string> {
    return `${await this.roleDir(roleName)}${await this.hmac(`secret_id:${secretId}`)}`;
  }

  private async accessorKey(accessor: string): Promise<string> {
    return `accessor/${await this.hmac(`accessor:${accessor}`)}`;
  }
}

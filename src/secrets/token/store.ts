/**
 * The token store: tokens, their accessors, the parent/child tree, expiry, use counts.
 *
 * Tokens never reach storage: a service token's entry is kept (encrypted, under the barrier) at
 * `id/<HMAC-SHA256(salt, token)>`; its accessor at `accessor/<HMAC(salt, accessor)>`; children at
 * `parent/<parent hash>/<child hash>`. Lookups compute the HMAC, read the entry, and compare the
 * stored hash with `timingSafeEqual`. Batch tokens are not stored at all: `hvb.` + the entry
 * encrypted by the barrier.
 */
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { InvalidRequestError } from '../errors.js';
import type { Auth } from '../logical.js';
import { getJSON, putJSON, type StorageView } from '../storage-view.js';

export type TokenType = 'service' | 'batch';

/** What is stored for a service token (and sealed into a batch token). */
export interface TokenEntry {
  idHash: string;
  accessor: string;
  /** '' for orphans. */
  parentHash: string;
  /** The token's own policies, sanitised. */
  policies: string[];
  path: string;
  meta: Record<string, string> | null;
  displayName: string;
  /** Remaining uses; 0 = unlimited. */
  numUses: number;
  /** ms since epoch. */
  creationTime: number;
  /** Seconds at creation (0: never expires). */
  creationTtl: number;
  /** ms since epoch; 0 = never. */
  expireTime: number;
  lastRenewalTime: number;
  explicitMaxTtl: number;
  period: number;
  role: string;
  type: TokenType;
  entityId: string;
  renewable: boolean;
  orphan: boolean;
  boundCidrs: string[];
  /** Accessor of the auth mount that issued the token ('' for the token store). */
  mountAccessor: string;
  /** The login's auth, for renewal through its auth method. */
  auth?: Auth;
  /** The mount's TTL limits at issue, reused on renewal. */
  backendMaxTtl: number;
  backendTtl: number;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` random characters of [0-9A-Za-z], unbiased. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export interface TokenCrypto {
  encrypt(aad: string, plaintext: Uint8Array): Buffer;
  decrypt(aad: string, ciphertext: Uint8Array): Buffer;
}

const BATCH_AAD = 'token/batch';

export class TokenStore {
  private salt: Buffer | undefined;

  constructor(
    private readonly view: StorageView,
    private readonly crypto: TokenCrypto,
    private readonly now: () => number = Date.now,
    /** Called for every revoked service token (e.g. to drop its cubbyhole). */
    private readonly onRevoke?: (entry: TokenEntry) => Promise<void>,
  ) {}

  async setup(): Promise<void> {
    const stored = await this.view.get('salt');
    if (stored) this.salt = Buffer.from(stored);
    else {
      this.salt = randomBytes(32);
      await this.view.put('salt', this.salt);
    }
  }

  hash(value: string): string {
    if (!this.salt) throw new Error('token store is not set up');
    return createHmac('sha256', this.salt).update(value, 'utf8').digest('hex');
  }

  newServiceTokenId(): string {
    return `hvs.${randomBase62(24)}`;
  }

  newAccessor(): string {
    return randomBase62(24);
  }

  /** Store a new service token entry, or seal a batch token; returns the token to hand out. */
  async create(entry: Omit<TokenEntry, 'idHash'>, id?: string): Promise<{ token: string; entry: TokenEntry }> {
    if (entry.type === 'batch') {
      const sealed = this.crypto.encrypt(BATCH_AAD, Buffer.from(JSON.stringify({ ...entry, idHash: '' })));
      const token = `hvb.${sealed.toString('base64url')}`;
      return { token, entry: { ...entry, idHash: this.hash(token) } };
    }
    const token = id ?? this.newServiceTokenId();
    const full: TokenEntry = { ...entry, idHash: this.hash(token) };
    if (await this.view.get(`id/${full.idHash}`)) throw new InvalidRequestError('cannot create a token with a duplicate ID');
    await putJSON(this.view, `id/${full.idHash}`, full);
    await putJSON(this.view, `accessor/${this.hash(full.accessor)}`, { accessor: full.accessor, idHash: full.idHash });
    if (full.parentHash) await this.view.put(`parent/${full.parentHash}/${full.idHash}`, new Uint8Array());
    return { token, entry: full };
  }

  /** The live entry of `token`, or undefined (unknown, expired — which revokes it — or a dead batch token's parent). */
  async lookup(token: string): Promise<TokenEntry | undefined> {
    if (token === '') return undefined;
    let entry: TokenEntry | undefined;
    if (token.startsWith('hvb.')) {
      try {
        entry = JSON.parse(this.crypto.decrypt(BATCH_AAD, Buffer.from(token.slice(4), 'base64url')).toString('utf8')) as TokenEntry;
      } catch {
        return undefined;
      }
      entry.idHash = this.hash(token);
      if (entry.parentHash && !(await this.byHash(entry.parentHash))) return undefined;
    } else {
      const hash = this.hash(token);
      entry = await getJSON<TokenEntry>(this.view, `id/${hash}`);
      if (!entry || !timingSafeEqual(Buffer.from(entry.idHash), Buffer.from(hash))) return undefined;
    }
    if (entry.expireTime !== 0 && entry.expireTime <= this.now()) {
      if (entry.type === 'service') await this.revokeTree(entry.idHash);
      return undefined;
    }
    return entry;
  }

  /** A live service token entry by its hash. */
  async byHash(idHash: string): Promise<TokenEntry | undefined> {
    const entry = await getJSON<TokenEntry>(this.view, `id/${idHash}`);
    if (!entry) return undefined;
    if (entry.expireTime !== 0 && entry.expireTime <= this.now()) {
      await this.revokeTree(entry.idHash);
      return undefined;
    }
    return entry;
  }

  async byAccessor(accessor: string): Promise<TokenEntry | undefined> {
    if (accessor === '') return undefined;
    const index = await getJSON<{ accessor: string; idHash: string }>(this.view, `accessor/${this.hash(accessor)}`);
    if (!index || index.accessor.length !== accessor.length || !timingSafeEqual(Buffer.from(index.accessor), Buffer.from(accessor))) return undefined;
    return this.byHash(index.idHash);
  }

  async save(entry: TokenEntry): Promise<void> {
    if (entry.type === 'batch') return;
    await putJSON(this.view, `id/${entry.idHash}`, entry);
  }

  /** Every accessor of a stored token. */
  async accessors(): Promise<string[]> {
    const out: string[] = [];
    for (const name of await this.view.list('accessor/')) {
      const index = await getJSON<{ accessor: string }>(this.view, `accessor/${name}`);
      if (index) out.push(index.accessor);
    }
    return out.sort();
  }

  /** Every stored entry (for revoking the tokens of a disabled auth mount). */
  async *entries(): AsyncGenerator<TokenEntry> {
    for (const name of await this.view.list('id/')) {
      const entry = await getJSON<TokenEntry>(this.view, `id/${name}`);
      if (entry) yield entry;
    }
  }

  /**
   * Remove what expiry left behind: expired tokens (with their descendants), accessor and parent
   * index entries whose token is gone. Returns how many tokens were revoked.
   */
  async tidy(): Promise<number> {
    let revoked = 0;
    const now = this.now();
    for (const name of await this.view.list('id/')) {
      const entry = await getJSON<TokenEntry>(this.view, `id/${name}`);
      if (entry && entry.expireTime !== 0 && entry.expireTime <= now) {
        await this.revokeTree(entry.idHash);
        revoked++;
      }
    }
    for (const name of await this.view.list('accessor/')) {
      const index = await getJSON<{ idHash: string }>(this.view, `accessor/${name}`);
      if (!index || !(await this.view.get(`id/${index.idHash}`))) await this.view.delete(`accessor/${name}`);
    }
    for (const parent of await this.view.list('parent/')) {
      const parentHash = parent.replace(/\/$/, '');
      const parentAlive = (await this.view.get(`id/${parentHash}`)) !== undefined;
      for (const child of await this.view.list(`parent/${parent}`)) {
        const childHash = child.replace(/\/$/, '');
        if (!parentAlive || !(await this.view.get(`id/${childHash}`))) await this.view.delete(`parent/${parentHash}/${childHash}`);
      }
    }
    return revoked;
  }

  /** Revoke a token and, depth first, all its descendants. */
  async revokeTree(idHash: string): Promise<void> {
    for (const child of await this.view.list(`parent/${idHash}/`)) {
      await this.revokeTree(child.replace(/\/$/, ''));
    }
    await this.revokeOne(idHash);
  }

  /** Revoke only this token; its children become orphans. */
  async revokeOrphan(idHash: string): Promise<void> {
    for (const child of await this.view.list(`parent/${idHash}/`)) {
      const childHash = child.replace(/\/$/, '');
      const entry = await getJSON<TokenEntry>(this.view, `id/${childHash}`);
      if (entry) {
        entry.parentHash = '';
        entry.orphan = true;
        await this.save(entry);
      }
      await this.view.delete(`parent/${idHash}/${childHash}`);
    }
    await this.revokeOne(idHash);
  }

  private async revokeOne(idHash: string): Promise<void> {
    const entry = await getJSON<TokenEntry>(this.view, `id/${idHash}`);
    if (!entry) return;
    await this.view.delete(`accessor/${this.hash(entry.accessor)}`);
    if (entry.parentHash) await this.view.delete(`parent/${entry.parentHash}/${idHash}`);
    await this.view.delete(`id/${idHash}`);
    await this.onRevoke?.(entry);
  }

  /** The entity id of (auth mount, alias name), created on first login. */
  async entityFor(mountAccessor: string, aliasName: string): Promise<string> {
    const key = `entity-alias/${mountAccessor}/${createHash('sha256').update(aliasName).digest('hex')}`;
    const existing = await getJSON<{ entityId: string }>(this.view, key);
    if (existing) return existing.entityId;
    const entityId = randomUUID();
    await putJSON(this.view, key, { entityId, mountAccessor, name: aliasName });
    return entityId;
  }
}

/**
 * Vault's policy sanitising: trim, lower-case, drop empties and duplicates, `root` alone when
 * present, optionally add `default`, sort.
 */
export function sanitizePolicies(policies: readonly string[], addDefault: boolean): string[] {
  const set = new Set(policies.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''));
  if (set.has('root')) return ['root'];
  if (addDefault) set.add('default');
  return [...set].sort();
}

/**
 * The barrier: everything the secrets service stores goes through it and reaches the storage
 * backend only as AES-256-GCM ciphertext. The keyring (data-encryption keys by term) is itself
 * stored encrypted under the unseal key, which exists only in memory between unseal and seal.
 *
 * Value layout: `term (4 bytes BE) | nonce (12) | ciphertext | tag (16)`, with the storage key as
 * additional authenticated data so that a value cannot be moved to another key unnoticed.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Storage } from '../../storage/types.js';
import { SealedError } from '../errors.js';
import { childNames, type StorageView } from '../storage-view.js';

export const KEYRING_PATH = 'core/keyring';

interface KeyringData {
  activeTerm: number;
  keys: { term: number; key: string; installed: string }[];
}

export class BarrierAuthenticationError extends Error {
  constructor() {
    super('cipher: message authentication failed');
    this.name = 'BarrierAuthenticationError';
  }
}

export function seal(key: Uint8Array, plaintext: Uint8Array, aad: string, term = 0): Buffer {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const header = Buffer.alloc(4);
  header.writeUInt32BE(term);
  return Buffer.concat([header, nonce, body, cipher.getAuthTag()]);
}

export function termOf(sealed: Uint8Array): number {
  return Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength).readUInt32BE(0);
}

export function open(key: Uint8Array, sealed: Uint8Array, aad: string): Buffer {
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (bytes.length < 4 + 12 + 16) throw new BarrierAuthenticationError();
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(4, 16));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  try {
    return Buffer.concat([decipher.update(bytes.subarray(16, bytes.length - 16)), decipher.final()]);
  } catch {
    throw new BarrierAuthenticationError();
  }
}

export class Barrier {
  private keys: Map<number, Buffer> | undefined;
  private activeTerm = 0;
  private installed = new Map<number, string>();
  /** Kept while unsealed, to re-encrypt the keyring when a term is added. */
  private unsealKey: Buffer | undefined;

  constructor(readonly storage: Storage) {}

  get sealed(): boolean {
    return this.keys === undefined;
  }

  async initialized(): Promise<boolean> {
    return (await this.storage.get(KEYRING_PATH)) !== undefined;
  }

  /** Create the keyring under `unsealKey` (32 bytes). The barrier stays sealed. */
  async initialize(unsealKey: Uint8Array): Promise<void> {
    const keyring: KeyringData = { activeTerm: 1, keys: [{ term: 1, key: randomBytes(32).toString('base64'), installed: new Date().toISOString() }] };
    await this.storage.put(KEYRING_PATH, seal(unsealKey, Buffer.from(JSON.stringify(keyring)), KEYRING_PATH), { expectedRevision: 0 });
  }

  /** Check `unsealKey` against the stored keyring without unsealing. */
  async verify(unsealKey: Uint8Array): Promise<void> {
    await this.readKeyring(unsealKey);
  }

  async unseal(unsealKey: Uint8Array): Promise<void> {
    const keyring = await this.readKeyring(unsealKey);
    this.keys = new Map(keyring.keys.map((k) => [k.term, Buffer.from(k.key, 'base64')]));
    this.installed = new Map(keyring.keys.map((k) => [k.term, k.installed]));
    this.activeTerm = keyring.activeTerm;
    this.unsealKey = Buffer.from(unsealKey);
  }

  seal(): void {
    for (const key of this.keys?.values() ?? []) key.fill(0);
    this.keys = undefined;
    this.unsealKey?.fill(0);
    this.unsealKey = undefined;
  }

  /** The active term and when it was installed (`sys/key-status`). */
  keyStatus(): { term: number; installed: string } {
    if (!this.keys) throw new SealedError();
    return { term: this.activeTerm, installed: this.installed.get(this.activeTerm) ?? '' };
  }

  /**
   * Add a new data-encryption key and make it the active term (`sys/rotate`). New values are
   * encrypted with it; older values keep decrypting with the term recorded in their header.
   */
  async rotate(): Promise<{ term: number; installed: string }> {
    if (!this.keys || !this.unsealKey) throw new SealedError();
    const term = Math.max(...this.keys.keys()) + 1;
    const installed = new Date().toISOString();
    const key = randomBytes(32);
    const keyring: KeyringData = {
      activeTerm: term,
      keys: [...this.keys].map(([t, k]) => ({ term: t, key: k.toString('base64'), installed: this.installed.get(t) ?? '' })).concat({ term, key: key.toString('base64'), installed }),
    };
    await this.storage.put(KEYRING_PATH, seal(this.unsealKey, Buffer.from(JSON.stringify(keyring)), KEYRING_PATH));
    this.keys.set(term, key);
    this.installed.set(term, installed);
    this.activeTerm = term;
    return { term, installed };
  }

  private async readKeyring(unsealKey: Uint8Array): Promise<KeyringData> {
    const stored = await this.storage.get(KEYRING_PATH);
    if (!stored) throw new Error('the barrier is not initialized');
    if (unsealKey.length !== 32) throw new BarrierAuthenticationError();
    return JSON.parse(open(unsealKey, stored.value, KEYRING_PATH).toString('utf8')) as KeyringData;
  }

  private activeKey(): Buffer {
    const key = this.keys?.get(this.activeTerm);
    if (!key) throw new SealedError();
    return key;
  }

  encrypt(aad: string, plaintext: Uint8Array): Buffer {
    return seal(this.activeKey(), plaintext, aad, this.activeTerm);
  }

  decrypt(aad: string, ciphertext: Uint8Array): Buffer {
    if (!this.keys) throw new SealedError();
    const key = this.keys.get(termOf(ciphertext));
    if (!key) throw new BarrierAuthenticationError();
    return open(key, ciphertext, aad);
  }

  async get(key: string): Promise<Buffer | undefined> {
    if (!this.keys) throw new SealedError();
    const kv = await this.storage.get(key);
    return kv ? this.decrypt(key, kv.value) : undefined;
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    await this.storage.put(key, this.encrypt(key, value));
  }

  async delete(key: string): Promise<void> {
    if (!this.keys) throw new SealedError();
    await this.storage.delete(key);
  }

  /** Keys below `prefix` (names and `dir/` folders), read without decrypting values. */
  async list(prefix: string): Promise<string[]> {
    if (!this.keys) throw new SealedError();
    const keys: string[] = [];
    let cont: string | undefined;
    do {
      const page = await this.storage.list(prefix, cont === undefined ? { limit: 1000 } : { limit: 1000, continue: cont });
      for (const item of page.items) keys.push(item.key);
      cont = page.continue;
    } while (cont !== undefined);
    return childNames(keys, prefix);
  }

  view(prefix: string): StorageView {
    return new BarrierView(this, prefix);
  }
}

export class BarrierView implements StorageView {
  constructor(
    private readonly barrier: Barrier,
    private readonly prefix: string,
  ) {}
  get(key: string) {
    return this.barrier.get(this.prefix + key);
  }
  put(key: string, value: Uint8Array) {
    return this.barrier.put(this.prefix + key, value);
  }
  delete(key: string) {
    return this.barrier.delete(this.prefix + key);
  }
  list(prefix: string) {
    return this.barrier.list(this.prefix + prefix);
  }
  sub(prefix: string): StorageView {
    return new BarrierView(this.barrier, this.prefix + prefix);
  }
}

/**
 * Encryption at rest for the kinds whose values are secret (Secrets), in the spirit of
 * kube-apiserver's EncryptionConfiguration `aesgcm` provider: each stored value is
 * `k8s:enc:aesgcm:v1:<keyName>:` + 12-byte nonce + AES-256-GCM ciphertext and tag, with the storage
 * key as additional data (a value copied under another key does not decrypt). Values written before
 * encryption was enabled (no prefix) are still read.
 *
 * The key lives in `<dataDir>/encryption.key` (32 random bytes, base64, mode 0600); servers sharing
 * one etcd must share it, as they share the data directory's certificates.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { StartupError } from '../../common/errors.js';
import { internalError } from '../errors.js';

export interface ValueTransformer {
  toStorage(plain: Uint8Array, storageKey: string): Uint8Array;
  fromStorage(stored: Uint8Array, storageKey: string): Uint8Array;
}

export const ENCRYPTION_KEY_FILE = 'encryption.key';
const KEY_NAME = 'key1';
const PREFIX = Buffer.from(`k8s:enc:aesgcm:v1:${KEY_NAME}:`);

export class AesGcmTransformer implements ValueTransformer {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('an AES-256-GCM key has 32 bytes');
  }

  /** Load `<dataDir>/encryption.key`, or create it when absent. */
  static async open(dataDir: string): Promise<AesGcmTransformer> {
    const file = path.join(dataDir, ENCRYPTION_KEY_FILE);
    if (!existsSync(file)) {
      await mkdir(dataDir, { recursive: true, mode: 0o700 });
      await writeFile(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
    }
    const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
    if (key.length !== 32) throw new StartupError(`${file}: want 32 bytes of base64 (an AES-256 key), found ${key.length}`);
    return new AesGcmTransformer(key);
  }

  toStorage(plain: Uint8Array, storageKey: string): Uint8Array {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(storageKey));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([PREFIX, nonce, body, cipher.getAuthTag()]);
  }

  fromStorage(stored: Uint8Array, storageKey: string): Uint8Array {
    const buffer = Buffer.from(stored);
    if (!buffer.subarray(0, PREFIX.length).equals(PREFIX)) return stored;
    const nonce = buffer.subarray(PREFIX.length, PREFIX.length + 12);
    const tag = buffer.subarray(buffer.length - 16);
    const body = buffer.subarray(PREFIX.length + 12, buffer.length - 16);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, nonce);
      decipher.setAAD(Buffer.from(storageKey));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]);
    } catch (error) {
      throw internalError(`cannot decrypt the value stored at ${storageKey} (is ${ENCRYPTION_KEY_FILE} the one it was written with?)`, { cause: error });
    }
  }
}

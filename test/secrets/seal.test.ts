// The OTP encoding of generate-root (spec §2.3 test vector), Shamir shares, and the barrier.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { MemoryStorage } from '../../src/storage/index.js';
import { Barrier } from '../../src/secrets/seal/barrier.js';
import { decodeToken, encodeToken } from '../../src/secrets/seal/otp.js';
import { combineShares, decodeKey, splitKey, validateSealConfig } from '../../src/secrets/seal/shamir.js';

test('the spec test vector: token XOR OTP in unpadded standard base64', () => {
  const token = 'hvs.ABCDEFGHIJKLMNOPQRSTUVWX';
  const otp = '0123456789abcdefghijABCDEFGH';
  const encoded = encodeToken(token, otp);
  assert.equal(encoded, 'WEdBHXV3dXN9fyYqKi4uKiomJjoQEBAQEBAQEA');
  assert.equal(encoded.length, 38);
  assert.equal(decodeToken(encoded, otp), token);
});

test('any 3 of 5 shares recombine the key; 2 do not', async () => {
  const key = randomBytes(32);
  const shares = await splitKey(key, validateSealConfig(5, 3));
  assert.equal(shares.length, 5);
  for (const share of shares) assert.equal(share.length, 33);
  assert.deepEqual(Buffer.from(await combineShares([shares[4]!, shares[0]!, shares[2]!])), key);
  assert.notDeepEqual(Buffer.from(await combineShares([shares[1]!, shares[3]!])), key);
});

test('seal configuration checks use Vault messages', () => {
  assert.throws(() => validateSealConfig(0, 1), /shares must be at least one/);
  assert.throws(() => validateSealConfig(3, 1), /threshold must be greater than one for multiple shares/);
  assert.throws(() => validateSealConfig(3, 4), /threshold cannot be larger than shares/);
  assert.throws(() => validateSealConfig(256, 3), /shares must be less than 256/);
  assert.throws(() => decodeKey('zz'), /'key' must be a valid hex or base64 string/);
  assert.equal(decodeKey('00'.repeat(33)).length, 33);
});

test('the barrier stores only ciphertext bound to its key; a wrong unseal key fails', async () => {
  const storage = new MemoryStorage();
  const barrier = new Barrier(storage);
  const unsealKey = randomBytes(32);
  await barrier.initialize(unsealKey);
  assert.equal(barrier.sealed, true);
  await assert.rejects(barrier.unseal(randomBytes(32)), /cipher: message authentication failed/);
  await barrier.unseal(unsealKey);
  await barrier.put('logical/x/secret', Buffer.from('plain secret'));
  const stored = await storage.get('logical/x/secret');
  assert.ok(stored && !Buffer.from(stored.value).includes(Buffer.from('plain secret')));
  assert.equal((await barrier.get('logical/x/secret'))!.toString(), 'plain secret');
  // A value moved to another key does not decrypt there.
  await storage.put('logical/x/moved', stored!.value);
  await assert.rejects(barrier.get('logical/x/moved'), /message authentication failed/);
  barrier.seal();
  await assert.rejects(barrier.get('logical/x/secret'), /Vault is sealed/);
});

test('unseal: wrong shares at the threshold are refused and the attempt starts over', async () => {
  const { Core } = await import('../../src/secrets/core.js');
  const { silentLogger } = await import('../../src/common/log.js');
  const make = () => new Core({ storage: new MemoryStorage(), logger: silentLogger(), storageType: 'inmem' });
  const core = make();
  const other = make();
  const mine = await core.init(3, 2);
  const theirs = await other.init(3, 2);
  assert.equal((await core.unseal(mine.keys_base64[0], false)).progress, 1);
  await assert.rejects(core.unseal(theirs.keys_base64[1], false), (e: unknown) => {
    assert.deepEqual((e as { statusCode: number; errors: string[] }).errors, ['cipher: message authentication failed']);
    return true;
  });
  const status = await core.sealStatus();
  assert.deepEqual([status.sealed, status.progress, status.nonce], [true, 0, '']);
  await core.unseal(mine.keys[2]!, false);
  assert.equal((await core.unseal(mine.keys_base64[1]!, false)).sealed, false, 'hex and base64 shares mix');
  await assert.rejects(core.unseal(undefined, true), /vault is unsealed/);
  await core.close();
  await other.close();
});

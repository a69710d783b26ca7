// A second client: hashi-vault-js (axios, X-Vault-Namespace: '' on every request, LIST method,
// encodeURIComponent-ed names) against the dev server.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Vault from 'hashi-vault-js';
import { devServer, ROOT } from './helpers.js';
import type { SecretsService } from '../../src/secrets/server.js';

let server: SecretsService;
let client: any;
before(async () => {
  server = await devServer();
  client = new (Vault as any)({ https: false, baseUrl: `${server.url}/v1`, timeout: 5000, proxy: false });
});
after(async () => {
  await server.close();
});

test('seal status and health', async () => {
  const status = await client.sealStatus();
  assert.equal(status.sealed, false);
  assert.equal(status.type, 'shamir');
  const health = await client.healthCheck();
  assert.equal(health.initialized, true);
});

test('token create, lookup, accessors (LIST), renew and revoke by accessor', async () => {
  const auth = await client.createToken(ROOT, { policies: ['default'], ttl: '1h', meta: { app: 'x' } });
  assert.match(auth.client_token, /^hvs\./);
  assert.deepEqual(auth.policies, ['default']);
  const lookup = await client.lookupToken(ROOT, auth.client_token);
  assert.equal(lookup.accessor, auth.accessor);
  assert.deepEqual(lookup.meta, { app: 'x' });
  const accessors = await client.listAccessors(ROOT);
  assert.ok(accessors.keys.includes(auth.accessor));
  const byAccessor = await client.lookupAccessor(ROOT, auth.accessor);
  assert.equal(byAccessor.id, '');
  const renewed = await client.renewAccessor(ROOT, auth.accessor, '30m');
  assert.equal(renewed.lease_duration, 1800);
  const caps = await client.sysCapabilities(ROOT, auth.client_token, ['auth/token/lookup-self']);
  assert.deepEqual(caps.capabilities, ['read']);
  await client.revokeAccessor(ROOT, auth.accessor);
  await assert.rejects(client.lookupSelfToken(auth.client_token), (error: any) => {
    assert.equal(error.isVaultError, true);
    assert.equal(error.vaultHelpMessage !== undefined || error.message !== undefined, true);
    return true;
  });
});

test('KV v2 through encoded names: the seed\'s apikey/<name> secret', async () => {
  await client.createKVSecret(ROOT, 'apikey/reports', { apiKey: 'abc-123' });
  const secret = await client.readKVSecret(ROOT, 'apikey/reports');
  assert.deepEqual(secret.data, { apiKey: 'abc-123' });
  assert.equal(secret.metadata.version, 1);
  const listed = await client.listKVSecrets(ROOT, 'apikey');
  assert.deepEqual(listed.keys, ['reports']);
  await assert.rejects(client.createKVSecret(ROOT, 'apikey/reports', { apiKey: 'again' }), (error: any) => {
    assert.equal(error.isVaultError, true);
    return true;
  }, 'cas 0 on an existing key is refused');
});

// A server on SQLite: init 5/3, unseal, restart (comes back sealed, data survives, the old root
// token works), generate-root with 3 of 5 keys through the CLI, and nothing secret in the file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { runCli } from '../helpers/cli.js';
import { http, sqliteServer, tempDir, vault } from './helpers.js';
import { secretsCli } from './cli-harness.js';
import type { SecretsService } from '../../src/secrets/server.js';

const dir = tempDir();
const dbFile = path.join(dir, 'secrets.db');
let server: SecretsService;
let keys: string[] = [];
let rootToken = '';
const secretsSeen: string[] = [];

before(async () => {
  server = await sqliteServer(dbFile);
});
after(async () => {
  await server.close();
});

async function unseal(url: string, shares: string[]) {
  const client = vault(url);
  let status: any;
  for (const key of shares) status = await client.unseal({ key });
  return status;
}

test('starts uninitialised and sealed; requests get 503 Vault is sealed', async () => {
  const client = vault(server.url);
  assert.deepEqual(await client.initialized(), { initialized: false });
  const status = await client.status();
  assert.equal(status.sealed, true);
  assert.equal(status.initialized, false);
  const sealed = await http(server.url, 'GET', 'secret/data/x', { token: 'anything' });
  assert.deepEqual([sealed.status, sealed.body], [503, { errors: ['Vault is sealed'] }]);
});

test('init 5/3 with node-vault, unseal with three keys (progress and nonce), wrong and bad keys', async () => {
  const client = vault(server.url);
  const init = await client.init({ secret_shares: 5, secret_threshold: 3 });
  assert.equal(init.keys.length, 5);
  assert.equal(init.keys_base64.length, 5);
  for (const key of init.keys) assert.match(key, /^[0-9a-f]{66}$/);
  assert.match(init.root_token, /^hvs\.[0-9A-Za-z]{24}$/);
  keys = init.keys_base64;
  rootToken = init.root_token;
  secretsSeen.push(rootToken, ...init.keys, ...init.keys_base64);

  const again = await http(server.url, 'PUT', 'sys/init', { body: { secret_shares: 1, secret_threshold: 1 } });
  assert.deepEqual([again.status, again.body], [400, { errors: ['Vault is already initialized'] }]);
  const bad = await http(server.url, 'PUT', 'sys/unseal', { body: { key: 'not a key!' } });
  assert.deepEqual([bad.status, bad.body], [400, { errors: ["'key' must be a valid hex or base64 string"] }]);

  const first = await client.unseal({ key: keys[0] });
  assert.equal(first.progress, 1);
  assert.equal(first.t, 3);
  assert.equal(first.n, 5);
  assert.match(first.nonce, /^[0-9a-f-]{36}$/);
  const status = await unseal(server.url, [keys[1]!, keys[2]!]);
  assert.equal(status.sealed, false);
  assert.equal(status.progress, 0);
  assert.match(status.cluster_name, /^vault-cluster-/);
});

test('policy write, token create with the seed options, KV writes, audit log with HMACs only', async () => {
  const root = vault(server.url, rootToken);
  const auditFile = path.join(dir, 'audit.log');
  await root.enableAudit({ name: 'file', type: 'file', options: { file_path: auditFile } });
  await root.addPolicy({ name: 'apps', rules: 'path "secret/data/*" {\n  capabilities = ["create", "read", "update"]\n}\n' });
  await root.mount({ mount_point: 'secret', type: 'kv', options: { version: '2' } });
  const created = (await root.tokenCreate({ policies: ['apps'], ttl: '1h', period: '', renewable: true })).auth;
  secretsSeen.push(created.client_token);
  const app = vault(server.url, created.client_token);
  await app.write('secret/data/apikey/payments', { data: { apiKey: 'sk_live_VERY_SECRET_VALUE_1' } });
  secretsSeen.push('sk_live_VERY_SECRET_VALUE_1');
  assert.deepEqual((await app.read('secret/data/apikey/payments')).data.data, { apiKey: 'sk_live_VERY_SECRET_VALUE_1' });

  const log = readFileSync(auditFile, 'utf8');
  const lines = log.trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(lines.some((l) => l.type === 'request' && l.request.path === 'secret/data/apikey/payments'));
  for (const secret of secretsSeen) assert.ok(!log.includes(secret), `audit log holds a secret in clear: ${secret.slice(0, 8)}…`);
  const hash = await vault(server.url, rootToken).write('sys/audit-hash/file', { input: 'sk_live_VERY_SECRET_VALUE_1' });
  assert.ok(log.includes(hash.data.hash), 'the HMAC of the value is searchable');
});

test('generate-root with 3 of 5 keys through the CLI; -decode gives a working root token', async () => {
  const env = { SECRETS_ADDR: server.url, SECRETS_TOKEN: '', VAULT_TOKEN: '', HOME: dir };
  const init = await secretsCli(['operator', 'generate-root', '-init', '-format=json'], { env });
  assert.equal(init.code, 0, init.stderr);
  const started = JSON.parse(init.stdout);
  assert.equal(started.otp.length, 28);
  assert.equal(started.otp_length, 28);
  assert.equal(started.required, 3);
  const status = await secretsCli(['operator', 'generate-root', '-status'], { env });
  assert.match(status.stdout, /Progress\s+0\/3/);
  assert.match(status.stdout, /OTP Length\s+28/);

  const wrongNonce = await http(server.url, 'PUT', 'sys/generate-root/update', { body: { key: keys[0], nonce: 'nope' } });
  assert.deepEqual([wrongNonce.status, wrongNonce.body], [400, { errors: [`incorrect nonce supplied; nonce for this root generation operation is "${started.nonce}"`] }]);

  let last = '';
  for (const [i, key] of [keys[0]!, keys[2]!, keys[4]!].entries()) {
    // Keys typed at the (hidden) prompt: here through standard input.
    const args = ['operator', 'generate-root', `-nonce=${started.nonce}`];
    // The last key holder runs the real command (a separate process); the others in this process.
    const step = i === 2 ? await runCli(['secrets', ...args], { env, input: `${key}\n` }) : await secretsCli(args, { env, input: `${key}\n` });
    assert.equal(step.code, 0, step.stderr);
    assert.match(step.stdout, new RegExp(`Progress\\s+${i + 1}/3`));
    last = step.stdout;
    if (i === 0) {
      const dup = await http(server.url, 'PUT', 'sys/generate-root/update', { body: { key, nonce: started.nonce } });
      assert.deepEqual(dup.body, { errors: ['given key has already been provided during this generation operation'] });
    }
  }
  assert.match(last, /Complete\s+true/);
  const encoded = /Encoded Token\s+(\S+)/.exec(last)![1]!;
  assert.equal(encoded.length, 38);
  const decoded = await runCli(['secrets', 'operator', 'generate-root', `-decode=${encoded}`, `-otp=${started.otp}`], { env });
  assert.equal(decoded.code, 0, decoded.stderr);
  const newRoot = decoded.stdout.trim();
  assert.match(newRoot, /^hvs\.[0-9A-Za-z]{24}$/);
  assert.notEqual(newRoot, rootToken);
  secretsSeen.push(newRoot);
  const made = await secretsCli(['token', 'create', `-token=${newRoot}`, '-policy=apps', '-ttl=20m'], { env });
  assert.equal(made.code, 0, made.stderr);
  assert.match(made.stdout, /token_policies\s+\["apps" "default"\]/);
  assert.match(made.stdout, /token_duration\s+20m/);

  const none = await http(server.url, 'PUT', 'sys/generate-root/update', { body: { key: keys[0], nonce: started.nonce } });
  assert.deepEqual(none.body, { errors: ['no root generation in progress'] });
});

test('sys/rotate adds a keyring term (sudo); values of both terms stay readable', async () => {
  const root = vault(server.url, rootToken);
  assert.equal((await root.read('sys/key-status')).data.term, 1);
  const plain = (await vault(server.url, rootToken).tokenCreate({ policies: ['apps'] })).auth.client_token;
  secretsSeen.push(plain);
  assert.equal((await http(server.url, 'PUT', 'sys/rotate', { token: plain })).status, 403);
  assert.equal((await http(server.url, 'PUT', 'sys/rotate', { token: rootToken })).status, 204);
  const status = await http(server.url, 'GET', 'sys/key-status', { token: rootToken });
  assert.equal(status.body.data.term, 2);
  assert.equal(status.body.term, 2, 'copied to the top level');
  await root.write('secret/data/apikey/after-rotate', { data: { apiKey: 'sk_live_AFTER_ROTATION_2' } });
  secretsSeen.push('sk_live_AFTER_ROTATION_2');
  assert.deepEqual((await root.read('secret/data/apikey/payments')).data.data, { apiKey: 'sk_live_VERY_SECRET_VALUE_1' });
});

test('restart: data survives, the server comes back sealed, the old root token works after unseal', async () => {
  await server.close();
  server = await sqliteServer(dbFile);
  const status = await vault(server.url).status();
  assert.equal(status.sealed, true);
  assert.equal(status.initialized, true);
  await unseal(server.url, [keys[4]!, keys[1]!, keys[3]!]);
  const root = vault(server.url, rootToken);
  assert.deepEqual((await root.read('secret/data/apikey/payments')).data.data, { apiKey: 'sk_live_VERY_SECRET_VALUE_1' });
  assert.deepEqual((await root.read('secret/data/apikey/after-rotate')).data.data, { apiKey: 'sk_live_AFTER_ROTATION_2' });
  assert.equal((await root.read('sys/key-status')).data.term, 2);
  assert.equal((await root.tokenLookupSelf()).data.path, 'auth/token/root');
  assert.ok((await root.policies()).policies.includes('apps'));
});

test('the SQLite files hold no token, key or secret value in clear', async () => {
  await server.close();
  const files = readdirSync(dir).filter((f) => f.startsWith('secrets.db'));
  assert.ok(files.length >= 1);
  const bytes = Buffer.concat(files.map((f) => readFileSync(path.join(dir, f))));
  assert.ok(bytes.includes(Buffer.from('core/keyring')), 'the grep itself sees storage keys');
  for (const secret of secretsSeen) assert.equal(bytes.includes(Buffer.from(secret)), false, `found in clear: ${secret.slice(0, 8)}…`);
  for (const key of keys) assert.equal(bytes.includes(Buffer.from(key, 'base64')), false, 'raw key share bytes');
  server = await sqliteServer(dbFile);
});

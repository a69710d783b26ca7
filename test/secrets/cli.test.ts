// The seed's CLI sequence against `portcullis secrets server -dev`, with Go-style flags.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { tempDir } from './helpers.js';
import { secretsCli } from './cli-harness.js';

const home = tempDir('secrets-cli-');
let child: ChildProcess;
let env: NodeJS.ProcessEnv;

before(async () => {
  child = spawnCli(['secrets', 'server', '-dev', '-dev-root-token-id=root', '-dev-listen-address=127.0.0.1:0'], { env: { HOME: home, SECRETS_TOKEN_FILE: '' } });
  const banner = await waitForOutput(child, /Listening on (http:\/\/\S+)/);
  const url = /Listening on (http:\/\/\S+)/.exec(banner)![1]!;
  assert.match(banner, /Root Token: root/);
  assert.match(banner, /Unseal Key: \S{44}/);
  env = { HOME: home, SECRETS_ADDR: url, SECRETS_TOKEN: '', VAULT_TOKEN: '', VAULT_ADDR: '', SECRETS_TOKEN_FILE: '' };
});
after(() => {
  child.kill('SIGTERM');
});

/** In-process; `spawned` runs the real `portcullis` command. */
const cli = (args: string[], input?: string, extraEnv: NodeJS.ProcessEnv = {}) => secretsCli(args, { env: { ...env, ...extraEnv }, input });
const spawned = (args: string[], input?: string) => runCli(['secrets', ...args], { env, input });

test('dev mode stored the root token in the token helper file (mode 0600)', () => {
  const file = path.join(home, '.portcullis-secrets-token');
  assert.equal(readFileSync(file, 'utf8'), 'root');
  assert.equal(statSync(file).mode & 0o777, 0o600);
});

test('token create / lookup -accessor / capabilities / renew / revoke, as in the seed', async () => {
  const created = await spawned(['token', 'create', '-policy=default', '-policy', 'web', '-ttl=20m', '-format=json']);
  assert.equal(created.code, 0, created.stderr);
  const auth = JSON.parse(created.stdout).auth;
  assert.deepEqual(auth.policies, ['default', 'web']);

  const table = await cli(['token', 'create', '-policy=web', '-period=20m', '-orphan']);
  assert.match(table.stdout, /^Key\s+Value\n---\s+-----\ntoken\s+hvs\.\S+\ntoken_accessor\s+\S+\ntoken_duration\s+20m\ntoken_renewable\s+true\ntoken_policies\s+\["default" "web"\]\nidentity_policies\s+\[\]\npolicies\s+\["default" "web"\]\n$/m);

  const lookup = await cli(['token', 'lookup', '-accessor', auth.accessor]);
  assert.equal(lookup.code, 0, lookup.stderr);
  assert.match(lookup.stdout, /^id\s*$/m, 'no token id through an accessor');
  assert.match(lookup.stdout, /^creation_ttl\s+20m$/m);
  assert.match(lookup.stdout, /^policies\s+\[default web\]$/m);

  const caps = await cli(['token', 'capabilities', auth.client_token, 'auth/token/lookup-self']);
  assert.deepEqual([caps.code, caps.stdout], [0, 'read\n']);
  const capsByAccessor = await cli(['token', 'capabilities', '-accessor', auth.accessor, 'secret/data/x']);
  assert.deepEqual([capsByAccessor.code, capsByAccessor.stdout], [0, 'deny\n']);
  const rootCaps = await cli(['token', 'capabilities', 'sys/mounts']);
  assert.equal(rootCaps.stdout, 'root\n');

  const renew = await cli(['token', 'renew', '-accessor', '-increment=10m', auth.accessor]);
  assert.equal(renew.code, 0, renew.stderr);
  assert.match(renew.stdout, /token_duration\s+10m/);

  const revoke = await cli(['token', 'revoke', '-accessor', auth.accessor]);
  assert.deepEqual([revoke.code, revoke.stdout], [0, 'Success! Revoked token (if it existed)\n']);
  const after = await spawned(['token', 'lookup', auth.client_token]);
  assert.equal(after.code, 2);
  assert.match(after.stderr, /Code: 403\. Errors: \* bad token/);
});

test('list auth/token/accessors; write -force; read; list; delete', async () => {
  const accessors = await cli(['list', 'auth/token/accessors']);
  assert.equal(accessors.code, 0, accessors.stderr);
  assert.match(accessors.stdout, /^Keys\n----\n[0-9A-Za-z]{24}\n/);
  const noData = await cli(['write', 'secret/data/x']);
  assert.equal(noData.code, 2);
  assert.match(noData.stderr, /Must supply data or use -force/);
  const tidy = await cli(['write', '-force', 'auth/token/tidy']);
  assert.equal(tidy.code, 0, tidy.stderr);
  assert.match(tidy.stdout, /Tidy operation successfully started/);
  await cli(['secrets', 'enable', '-path=kv1', '-description=team secrets', 'kv']);
  const wrote = await cli(['write', 'kv1/app', 'user=svc', 'ttl=30m']);
  assert.deepEqual([wrote.code, wrote.stdout], [0, 'Success! Data written to: kv1/app\n']);
  const read = await cli(['read', 'kv1/app']);
  assert.match(read.stdout, /^refresh_interval\s+30m\nttl\s+30m\nuser\s+svc\n$/m);
  assert.equal((await cli(['read', '-field=user', 'kv1/app'])).stdout, 'svc\n');
  const missing = await cli(['read', 'kv1/none']);
  assert.deepEqual([missing.code, missing.stderr.trim()], [2, 'portcullis: No value found at kv1/none']);
  assert.equal((await cli(['list', 'kv1'])).stdout, 'Keys\n----\napp\n');
  const mounts = await cli(['secrets', 'list']);
  assert.match(mounts.stdout, /^kv1\/\s+kv\s+kv_[0-9a-f]{8}\s+team secrets$/m);
  assert.match(mounts.stdout, /^secret\/\s+kv\s+/m);
});

test('kv put/get on the KV v2 secret/ mount, and the seed pair over curl-like HTTP', async () => {
  const put = await cli(['kv', 'put', 'secret/apikey/svc', 'apiKey=abc']);
  assert.equal(put.code, 0, put.stderr);
  assert.match(put.stdout, /secret\/data\/apikey\/svc/);
  assert.match(put.stdout, /^version\s+1$/m);
  const get = await cli(['kv', 'get', 'secret/apikey/svc']);
  assert.match(get.stdout, /====== Data ======\nKey\s+Value\n---\s+-----\napiKey\s+abc\n/);
  assert.equal((await cli(['kv', 'get', '-field=apiKey', 'secret/apikey/svc'])).stdout, 'abc\n');
});

test('policy write/read/list/delete from a file; login with a token writes the token helper', async () => {
  const file = path.join(home, 'dev.hcl');
  writeFileSync(file, 'path "secret/data/dev/*" {\n  capabilities = ["create", "read"]\n}\n');
  assert.equal((await cli(['policy', 'write', 'dev', file])).stdout, 'Success! Uploaded policy: dev\n');
  assert.equal((await cli(['policy', 'read', 'dev'])).stdout, readFileSync(file, 'utf8'));
  assert.equal((await cli(['policy', 'list'])).stdout, 'default\ndev\nroot\n');
  const bad = await cli(['policy', 'write', 'bad', '-'], 'path "x" { capabilities = ["fly"] }');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Code: 400\. Errors: \* failed to parse policy: path "x": invalid capability "fly"/);

  const token = JSON.parse((await cli(['token', 'create', '-policy=dev', '-format=json'])).stdout).auth.client_token;
  const helper = path.join(home, 'helper-token');
  const login = await cli(['login', token], undefined, { SECRETS_TOKEN_FILE: helper });
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stdout, /^Success! You are now authenticated\./);
  assert.match(login.stdout, /token_policies\s+\["default" "dev"\]/);
  assert.equal(readFileSync(helper, 'utf8'), token);
  const self = await cli(['token', 'lookup', '-format=json'], undefined, { SECRETS_TOKEN_FILE: helper });
  assert.deepEqual(JSON.parse(self.stdout).data.policies, ['default', 'dev']);
  const hidden = await cli(['login'], `${token}\n`, { SECRETS_TOKEN_FILE: helper });
  assert.equal(hidden.code, 0, hidden.stderr);
  assert.match(hidden.stderr, /Token \(will be hidden\): /);
  assert.equal((await cli(['policy', 'delete', 'dev'])).stdout, 'Success! Deleted policy: dev\n');
});

test('auth enable of an unknown type and a usage error exit with 2', async () => {
  const unknown = await cli(['auth', 'enable', 'nosuchmethod']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /plugin not found in the catalog: nosuchmethod/);
  const flag = await spawned(['token', 'create', '-bogus']);
  assert.deepEqual([flag.code, flag.stderr.trim()], [2, 'error: flag provided but not defined: -bogus']);
  const list = await cli(['auth', 'list']);
  assert.match(list.stdout, /^token\/\s+token\s+auth_token_[0-9a-f]{8}\s+token based credentials$/m);
});

test('login -method=userpass (password at the hidden prompt) and -method=approle', async () => {
  const helper = path.join(home, 'login-token');
  assert.equal((await cli(['auth', 'enable', 'userpass'])).stdout, 'Success! Enabled userpass auth method at: userpass/\n');
  assert.equal((await cli(['auth', 'enable', '-path=people', 'userpass'])).code, 0);
  assert.equal((await cli(['write', 'auth/userpass/users/alice', 'password=wonderland', 'policies=default'])).code, 0);
  const login = await cli(['login', '-method=userpass', 'username=alice'], 'wonderland\n', { SECRETS_TOKEN_FILE: helper });
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stderr, /Password \(will be hidden\): /);
  assert.match(login.stdout, /token_meta_username\s+alice/);
  assert.match(readFileSync(helper, 'utf8'), /^hvs\./);
  const wrong = await cli(['login', '-method=userpass', '-path=people', 'username=alice', 'password=nope'], undefined, { SECRETS_TOKEN_FILE: helper });
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /Code: 400\. Errors: \* invalid username or password/);

  assert.equal((await cli(['auth', 'enable', 'approle'])).code, 0);
  assert.equal((await cli(['write', 'auth/approle/role/ci', 'policies=default', 'token_ttl=20m'])).code, 0);
  const roleId = (await cli(['read', '-field=role_id', 'auth/approle/role/ci/role-id'])).stdout.trim();
  const secretId = (await cli(['write', '-f', '-field=secret_id', 'auth/approle/role/ci/secret-id'])).stdout.trim();
  const approle = await cli(['login', '-method=approle', `role_id=${roleId}`, `secret_id=${secretId}`, '-no-store']);
  assert.equal(approle.code, 0, approle.stderr);
  assert.match(approle.stdout, /token_duration\s+20m/);
  assert.match(approle.stdout, /token_meta_role_name\s+ci/);
});

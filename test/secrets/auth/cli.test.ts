// The seed's CLI flows for AppRole, userpass and idp, run with the `portcullis` command against a
// real server, printing what docs/secrets.md shows (tokens and IDs masked).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../helpers/cli.js';
import { startTestServer, type TestServer } from './server.js';
import { IdpDouble } from './idp-double.js';

let server: TestServer;
let idp: IdpDouble;
let home: string;

before(async () => {
  server = await startTestServer();
  idp = await IdpDouble.start({ apiToken: 'ssws-cli', users: [{ login: 'alice@example.com', password: 'alice-pw', groups: ['Engineering'] }] });
  home = mkdtempSync(path.join(os.tmpdir(), 'auth-cli-'));
  writeFileSync(path.join(home, 'idp-ca.pem'), idp.caCert);
  await server.request('PUT', 'sys/policy/dev', { token: server.rootToken, body: { policy: 'path "kv/dev/*" { capabilities = ["read"] }' } });
});
after(async () => {
  await Promise.all([server.close(), idp.close()]);
  rmSync(home, { recursive: true, force: true });
});

/**
 * Run `portcullis secrets …` as root (unless `token` says otherwise). Returns stdout (stdout and
 * stderr when a failure is expected) as printed, and masked: tokens, accessors and UUIDs replaced.
 */
async function run(args: string[], options: { token?: string; input?: string; code?: number } = {}): Promise<{ printed: string; masked: string }> {
  const result = await runCli(['secrets', ...args], {
    input: options.input,
    env: { HOME: home, VAULT_ADDR: server.url, VAULT_TOKEN: options.token ?? server.rootToken, SECRETS_TOKEN_FILE: path.join(home, 'token') },
  });
  const code = options.code ?? 0;
  assert.equal(result.code, code, `portcullis secrets ${args.join(' ')}\n${result.stdout}\n${result.stderr}`);
  const printed = code === 0 ? result.stdout : result.stdout + result.stderr;
  const masked = printed
    .replace(/hvs\.[A-Za-z0-9]{24}/g, 'hvs.TOKEN')
    .replace(/\b[A-Za-z0-9]{24}\b/g, 'ACCESSOR')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'UUID');
  return { printed, masked };
}

const secrets = async (args: string[], options: { token?: string; input?: string; code?: number } = {}) => (await run(args, options)).masked;
const valueOf = (table: string, key: string) => new RegExp(`^${key} +(\\S+)$`, 'm').exec(table)?.[1];

test('AppRole: enable, role with policies and token_ttl, list, role-id (same twice), secret-id (new each time), login', async () => {
  assert.equal(await secrets(['auth', 'enable', 'approle']), 'Success! Enabled approle auth method at: approle/\n');
  assert.equal(await secrets(['write', 'auth/approle/role/my-role', 'policies=dev', 'token_ttl=20m']), 'Success! Data written to: auth/approle/role/my-role\n');
  assert.equal(await secrets(['list', 'auth/approle/role']), 'Keys\n----\nmy-role\n');
  const roleIdTable = await run(['read', 'auth/approle/role/my-role/role-id']);
  assert.equal(roleIdTable.masked, 'Key        Value\n---        -----\nrole_id    UUID\n');
  const roleId = valueOf(roleIdTable.printed, 'role_id')!;
  assert.match(roleId, /^[0-9a-f-]{36}$/);
  assert.equal(valueOf((await run(['read', 'auth/approle/role/my-role/role-id'])).printed, 'role_id'), roleId, 'role_id is stable');
  const secretTable = await run(['write', '-force', 'auth/approle/role/my-role/secret-id']);
  assert.match(secretTable.masked, /^Key {19}Value\n--- {19}-----\nsecret_id {13}UUID\nsecret_id_accessor {4}UUID\nsecret_id_num_uses {4}0\nsecret_id_ttl {9}0s\n$/);
  const secretId = valueOf(secretTable.printed, 'secret_id')!;
  assert.match(secretId, /^[0-9a-f-]{36}$/);
  assert.notEqual(valueOf((await run(['write', '-force', 'auth/approle/role/my-role/secret-id'])).printed, 'secret_id'), secretId, 'a new secret_id each time');

  assert.equal(
    await secrets(['write', 'auth/approle/login', `role_id=${roleId}`, `secret_id=${secretId}`]),
    [
      'Key                     Value',
      '---                     -----',
      'token                   hvs.TOKEN',
      'token_accessor          ACCESSOR',
      'token_duration          20m',
      'token_renewable         true',
      'token_policies          ["default" "dev"]',
      'identity_policies       []',
      'policies                ["default" "dev"]',
      'token_meta_role_name    my-role',
      '',
    ].join('\n'),
  );
  const wrong = await secrets(['write', 'auth/approle/login', `role_id=${roleId}`, 'secret_id=wrong'], { code: 2 });
  assert.match(wrong, /Code: 400\. Errors:\s+\* invalid role or secret ID/);
});

test('userpass: create users, list, login with the password prompted', async () => {
  assert.equal(await secrets(['auth', 'enable', 'userpass']), 'Success! Enabled userpass auth method at: userpass/\n');
  assert.equal(await secrets(['write', 'auth/userpass/users/alice', 'password=s3cret', 'policies=dev']), 'Success! Data written to: auth/userpass/users/alice\n');
  await secrets(['write', 'auth/userpass/users/bob', 'password=hunter2', 'policies=dev']);
  assert.equal(await secrets(['list', 'auth/userpass/users']), 'Keys\n----\nalice\nbob\n');
  const login = await secrets(['login', '-method=userpass', 'username=alice'], { input: 's3cret\n', token: '' });
  assert.match(login, /Success! You are now authenticated\./);
  assert.match(login, /token_policies {9}\["default" "dev"\]\nidentity_policies {6}\[\]\npolicies {15}\["default" "dev"\]\ntoken_meta_username {4}alice\n$/);
  const wrong = await secrets(['login', '-method=userpass', 'username=alice', 'password=nope'], { token: '', code: 2 });
  assert.match(wrong, /Code: 400\. Errors:\s+\* invalid username or password/);
});

test('idp: config (api_token not shown), user and group mappings, login', async () => {
  assert.equal(await secrets(['auth', 'enable', 'idp']), 'Success! Enabled idp auth method at: idp/\n');
  assert.equal(
    await secrets(['write', 'auth/idp/config', `base_url=${idp.url}`, 'org_name=acme', 'api_token=ssws-cli', `certificate=@${path.join(home, 'idp-ca.pem')}`]),
    'Success! Data written to: auth/idp/config\n',
  );
  const config = await secrets(['read', 'auth/idp/config']);
  assert.match(config, new RegExp(`base_url +${idp.url.replace(/[.]/g, '\\.')}\n`));
  assert.match(config, /org_name +acme\n/);
  assert.doesNotMatch(config, /api_token|ssws-cli/);
  assert.equal(await secrets(['write', 'auth/idp/users/alice@example.com', 'policies=dev']), 'Success! Data written to: auth/idp/users/alice@example.com\n');
  assert.equal(await secrets(['write', 'auth/idp/groups/Engineering', 'policies=dev']), 'Success! Data written to: auth/idp/groups/Engineering\n');
  const login = await secrets(['login', '-no-store', '-method=idp', 'username=alice@example.com', 'password=alice-pw'], { token: '' });
  assert.match(login, /policies {15}\["default" "dev"\]\ntoken_meta_username {4}alice@example\.com\ntoken_meta_policies {4}dev\n$/);
});

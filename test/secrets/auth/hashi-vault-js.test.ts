// The auth methods through a second client, hashi-vault-js (axios, the LIST method, an empty
// X-Vault-Namespace header on every request, legacy `policies` fields).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Vault from 'hashi-vault-js';
import { startTestServer, type TestServer } from './server.js';
import { GROUPS_DN, PEOPLE_DN, USERS, slapdAvailable, startSlapd } from './slapd.js';

let server: TestServer;
let client: any;
let root: string;

before(async () => {
  server = await startTestServer();
  root = server.rootToken;
  client = new (Vault as any)({ https: false, baseUrl: `${server.url}/v1`, timeout: 10_000, proxy: false });
  for (const type of ['userpass', 'approle', 'ldap']) await server.vault().enableAuth({ mount_point: type, type });
});
after(() => server.close());

test('userpass: create, read, list, login, change password and policies', async () => {
  await client.createUserpassUser(root, 'carol', 'pw-1', ['dev']);
  assert.deepEqual((await client.readUserpassUser(root, 'carol')).token_policies, ['dev']);
  assert.deepEqual((await client.listUserpassUsers(root)).keys, ['carol']);
  const auth = await client.loginWithUserpass('carol', 'pw-1');
  assert.deepEqual([auth.policies, auth.metadata], [['default', 'dev'], { username: 'carol' }]);
  await client.updateUserpassPassword(root, 'carol', 'pw-2');
  await client.updateUserpassPolicies(root, 'carol', ['ops']);
  await assert.rejects(client.loginWithUserpass('carol', 'pw-1'), (error: { status?: number; vaultHelpMessage?: string }) => {
    assert.equal(error.status, 400);
    return true;
  });
  assert.deepEqual((await client.loginWithUserpass('carol', 'pw-2')).policies, ['default', 'ops']);
  await client.deleteUserpassUser(root, 'carol');
  await assert.rejects(client.loginWithUserpass('carol', 'pw-2'));
});

test('approle: generate, read and destroy a secret ID; login', async () => {
  await server.vault().write('auth/approle/role/build', { token_policies: 'dev' });
  const roleId = (await server.vault().read('auth/approle/role/build/role-id')).data.role_id;
  const secret = await client.generateAppRoleSecretId(root, 'build', '{"job":"42"}');
  const read = await client.readAppRoleSecretId(root, 'build', secret.secret_id);
  assert.deepEqual([read.secret_id_accessor, read.metadata], [secret.secret_id_accessor, { job: '42' }]);
  const auth = await client.loginWithAppRole(roleId, secret.secret_id);
  assert.deepEqual(auth.metadata, { job: '42', role_name: 'build' });
  await client.destroyAppRoleSecretId(root, 'build', secret.secret_id);
  await assert.rejects(client.loginWithAppRole(roleId, secret.secret_id));
});

test('ldap: set config, groups and users, login against slapd', { skip: slapdAvailable() ? false : 'slapd is not installed' }, async () => {
  const slapd = await startSlapd();
  try {
    await client.setLdapConfig(root, { url: slapd.url, userdn: PEOPLE_DN, userattr: 'uid', groupdn: GROUPS_DN });
    assert.equal((await client.readLdapConfig(root)).url, slapd.url);
    await client.createLdapGroup(root, 'admins', ['admin']);
    await client.createLdapUser(root, 'bob', ['bob-own'], []);
    assert.deepEqual((await client.listLdapGroups(root)).keys, ['admins']);
    assert.deepEqual((await client.readLdapUser(root, 'bob')).policies, ['bob-own']);
    const auth = await client.loginWithLdap('bob', USERS.bob.password);
    assert.deepEqual(auth.policies, ['admin', 'bob-own', 'default']);
    await assert.rejects(client.loginWithLdap('bob', 'wrong'));
  } finally {
    await slapd.stop();
  }
});

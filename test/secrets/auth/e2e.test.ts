// The four auth methods end to end: a real server on loopback, node-vault as the client, slapd and
// the IdP double as the directories. Each login's token reads exactly what its policies allow.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type nodeVault from 'node-vault';
import { startTestServer, type TestServer } from './server.js';
import { IdpDouble } from './idp-double.js';
import { GROUPS_DN, PEOPLE_DN, SEARCH_BIND_DN, SEARCH_BIND_PASSWORD, USERS, slapdAvailable, startSlapd, type Slapd } from './slapd.js';

const IDP_API_TOKEN = 'ssws-e2e';

/** node-vault rejects with `response.statusCode` and the first error as message. */
async function failsWith(promise: Promise<unknown>, status: number, message: string): Promise<void> {
  await assert.rejects(promise, (error: { response?: { statusCode?: number }; message?: string }) => {
    assert.equal(error.response?.statusCode, status, `status of ${error.message}`);
    assert.equal(error.message, message);
    return true;
  });
}

/** The token may read kv/<allowed>/app and gets 403 on every other kv/<name>/app. */
async function readsExactly(vault: nodeVault.client, allowed: readonly string[]): Promise<void> {
  for (const area of ['dev', 'ops', 'admin']) {
    if (allowed.includes(area)) {
      assert.deepEqual((await vault.read(`kv/${area}/app`)).data, { value: `${area}-secret` }, `reads kv/${area}/app`);
    } else {
      await failsWith(vault.read(`kv/${area}/app`), 403, '1 error occurred:\n\t* permission denied\n\n');
    }
  }
}

describe('auth methods through node-vault against a real server', () => {
  let server: TestServer;
  let root: nodeVault.client;

  before(async () => {
    server = await startTestServer();
    root = server.vault();
    await root.mount({ mount_point: 'kv', type: 'kv' });
    for (const area of ['dev', 'ops', 'admin']) {
      await root.addPolicy({ name: area, rules: `path "kv/${area}/*" { capabilities = ["read"] }` });
      await root.write(`kv/${area}/app`, { value: `${area}-secret` });
    }
  });
  after(() => server.close());

  test('sys/auth: enable approle, userpass, idp and okta at their names; several userpass mounts', async () => {
    await root.enableAuth({ mount_point: 'approle', type: 'approle' });
    await root.enableAuth({ mount_point: 'userpass', type: 'userpass' });
    await root.enableAuth({ mount_point: 'people', type: 'userpass', description: 'second userpass' });
    await root.enableAuth({ mount_point: 'idp', type: 'idp' });
    await root.enableAuth({ mount_point: 'okta', type: 'okta' });
    const auths = (await root.auths()) as Record<string, { type: string; accessor: string }>;
    assert.deepEqual(
      ['approle/', 'idp/', 'okta/', 'people/', 'token/', 'userpass/'].map((p) => [p, auths[p]?.type]),
      [['approle/', 'approle'], ['idp/', 'idp'], ['okta/', 'okta'], ['people/', 'userpass'], ['token/', 'token'], ['userpass/', 'userpass']],
    );
    assert.match(auths['userpass/']!.accessor, /^auth_userpass_[0-9a-f]{8}$/);
  });

  test("AppRole: node-vault's addApproleRole, getApproleRoleId (stable), getApproleRoleSecret (new each time), approleLogin", async () => {
    await root.addApproleRole({ role_name: 'web', policies: 'dev', token_ttl: 1200, token_max_ttl: 3600, secret_id_num_uses: 0, secret_id_ttl: 0 });
    const role = (await root.getApproleRole({ role_name: 'web' })).data;
    assert.deepEqual([role.token_policies, role.policies, role.token_ttl, role.bind_secret_id], [['dev'], ['dev'], 1200, true]);
    const roleId = (await root.getApproleRoleId({ role_name: 'web' })).data.role_id;
    assert.equal((await root.getApproleRoleId({ role_name: 'web' })).data.role_id, roleId, 'role_id is stable');
    const first = (await root.getApproleRoleSecret({ role_name: 'web' })).data;
    const second = (await root.getApproleRoleSecret({ role_name: 'web', metadata: '{"host":"ci-1"}' })).data;
    assert.notEqual(first.secret_id, second.secret_id);
    assert.deepEqual([first.secret_id_num_uses, first.secret_id_ttl], [0, 0]);
    assert.deepEqual((await root.approleRoles()).data.keys, ['web']);

    const client = server.vault('');
    const login = await client.approleLogin({ role_id: roleId, secret_id: second.secret_id });
    assert.deepEqual(
      [login.auth.policies, login.auth.token_policies, login.auth.metadata, login.auth.lease_duration, login.auth.renewable, login.auth.orphan],
      [['default', 'dev'], ['default', 'dev'], { host: 'ci-1', role_name: 'web' }, 1200, true, true],
    );
    assert.equal(client.token, login.auth.client_token, 'node-vault switched to the new token');
    const self = (await client.tokenLookupSelf()).data;
    assert.deepEqual([self.display_name, self.path, self.meta.role_name], ['approle', 'auth/approle/login', 'web']);
    await readsExactly(client, ['dev']);

    await failsWith(server.vault('').approleLogin({ role_id: roleId, secret_id: 'not-it' }), 400, 'invalid role or secret ID');
    await failsWith(server.vault('').approleLogin({ role_id: 'not-it', secret_id: second.secret_id }), 400, 'invalid role or secret ID');
    await failsWith(server.vault('').write('auth/approle/login', { secret_id: second.secret_id }), 400, 'missing role_id');

    // Secret-ID management through node-vault.
    const accessors = (await root.approleSecretAccessors({ role_name: 'web' })).data.keys as string[];
    assert.deepEqual([...accessors].sort(), [first.secret_id_accessor, second.secret_id_accessor].sort());
    assert.equal((await root.approleSecretLookup({ role_name: 'web', secret_id: first.secret_id })).data.secret_id_accessor, first.secret_id_accessor);
    await root.approleSecretDestroy({ role_name: 'web', secret_id: first.secret_id });
    await failsWith(server.vault('').approleLogin({ role_id: roleId, secret_id: first.secret_id }), 400, 'invalid role or secret ID');
    const accessorLookup = await root.approleSecretAccessorLookup({ role_name: 'web', secret_id_accessor: second.secret_id_accessor });
    assert.deepEqual(accessorLookup.data.metadata, { host: 'ci-1' });
    await root.approleSecretAccessorDestroy({ role_name: 'web', secret_id_accessor: second.secret_id_accessor });
    await failsWith(root.approleSecretAccessors({ role_name: 'web' }), 404, 'Status 404');
  });

  test('userpass: users CRUD and LIST, userpassLogin, the seed curl form, wrong password 400', async () => {
    await root.write('auth/userpass/users/alice', { password: 'alice-pw', policies: 'ops' });
    await root.write('auth/userpass/users/bob', { password: 'bob-pw', token_policies: ['dev', 'ops'] });
    assert.deepEqual((await root.list('auth/userpass/users')).data.keys, ['alice', 'bob']);
    const alice = (await root.read('auth/userpass/users/alice')).data;
    assert.equal(alice.password, undefined);
    assert.deepEqual(alice.token_policies, ['ops']);

    const client = server.vault('');
    const login = await client.userpassLogin({ username: 'alice', password: 'alice-pw' });
    assert.deepEqual([login.auth.policies, login.auth.metadata], [['default', 'ops'], { username: 'alice' }]);
    assert.equal((await client.tokenLookupSelf()).data.display_name, 'userpass-alice');
    await readsExactly(client, ['ops']);

    // The seed's HTTP example: POST a JSON body (curl --data @payload.json), token at auth.client_token.
    const seed = await server.request('POST', 'auth/userpass/login/bob', { body: '{"password": "bob-pw"}\n' });
    assert.equal(seed.status, 200);
    assert.match(seed.body.auth.client_token, /^hvs\./);
    await readsExactly(server.vault(seed.body.auth.client_token), ['dev', 'ops']);

    const wrong = await server.request('POST', 'auth/userpass/login/alice', { body: { password: 'nope' } });
    assert.deepEqual([wrong.status, wrong.body], [400, { errors: ['invalid username or password'] }]);
    const unknown = await server.request('POST', 'auth/userpass/login/nobody', { body: { password: 'nope' } });
    assert.deepEqual([unknown.status, unknown.body], [400, { errors: ['invalid username or password'] }]);
    const missing = await server.request('POST', 'auth/userpass/login/alice', { body: {} });
    assert.deepEqual([missing.status, missing.body], [400, { errors: ['missing password'] }]);
    const unauthenticated = await server.request('LIST', 'auth/userpass/users');
    assert.deepEqual([unauthenticated.status, unauthenticated.body], [403, { errors: ['permission denied'] }]);
  });

  test('userpass: a second mount is independent; renew re-checks the user; disabling a mount revokes its tokens', async () => {
    await root.write('auth/people/users/alice', { password: 'other-pw', policies: 'admin' });
    await failsWith(server.vault('').userpassLogin({ mount_point: 'people', username: 'alice', password: 'alice-pw' }), 400, 'invalid username or password');
    const client = server.vault('');
    await client.userpassLogin({ mount_point: 'people', username: 'alice', password: 'other-pw' });
    await readsExactly(client, ['admin']);

    const renewed = await client.tokenRenewSelf();
    assert.deepEqual(renewed.auth.policies, ['admin', 'default']);
    await root.write('auth/people/users/alice/policies', { token_policies: 'admin,dev' });
    await failsWith(client.tokenRenewSelf(), 400, 'policies have changed, not renewing');

    await root.disableAuth({ mount_point: 'people' });
    await failsWith(client.read('kv/admin/app'), 403, 'permission denied');
  });

  test('idp: config (api_token never read back), user and group mappings, login through node-vault write', async () => {
    const idp = await IdpDouble.start({
      apiToken: IDP_API_TOKEN,
      users: [
        { login: 'alice', password: 'alice-pw', groups: ['Engineering', 'Everyone'] },
        { login: 'bob', password: 'bob-pw', groups: ['Everyone'] },
        { login: 'mfa', password: 'mfa-pw', groups: ['Engineering'], factors: { totp: { passCode: '246810' } } },
      ],
    });
    try {
      for (const mount of ['idp', 'okta']) {
        await root.write(`auth/${mount}/config`, { base_url: idp.url, org_name: 'acme', api_token: IDP_API_TOKEN, certificate: idp.caCert, request_timeout: '2s' });
        await root.write(`auth/${mount}/groups/Engineering`, { policies: 'dev' });
        await root.write(`auth/${mount}/users/bob`, { policies: 'ops' });
      }
      const config = (await root.read('auth/idp/config')).data;
      assert.deepEqual([config.base_url, config.org_name, config.api_token], [idp.url, 'acme', undefined]);
      assert.deepEqual((await root.read('auth/idp/groups/Engineering')).data, { policies: ['dev'] });
      assert.deepEqual((await root.list('auth/idp/users')).data.keys, ['bob']);

      const alice = server.vault('');
      const login = await alice.write('auth/idp/login/alice', { password: 'alice-pw' });
      assert.deepEqual([login.auth.policies, login.auth.metadata], [['default', 'dev'], { username: 'alice', policies: 'dev' }]);
      await readsExactly(server.vault(login.auth.client_token), ['dev']);
      const self = (await server.vault(login.auth.client_token).tokenLookupSelf()).data;
      assert.deepEqual([self.display_name, self.path], ['idp-alice', 'auth/idp/login/alice']);

      const bob = server.vault('');
      await bob.oktaLogin({ username: 'bob', password: 'bob-pw' }); // node-vault's own Okta call, mount `okta`
      await readsExactly(bob, ['ops']);

      await failsWith(server.vault('').write('auth/idp/login/alice', { password: 'wrong' }), 400, 'okta authentication failed');
      await failsWith(server.vault('').write('auth/idp/login/mfa', { password: 'mfa-pw' }), 400, "'totp' passcode parameter is required to perform MFA");
      const mfa = await server.vault('').write('auth/idp/login/mfa', { password: 'mfa-pw', totp: '246810' });
      assert.deepEqual(mfa.auth.policies, ['default', 'dev']);
      idp.fault = 'html';
      await failsWith(server.vault('').write('auth/idp/login/alice', { password: 'alice-pw' }), 400, 'Okta auth failed: the IdP answered HTTP 200 with a body that is not JSON (text/html)');
    } finally {
      await idp.close();
    }
  });

  test('ldap: config, group mapping, ldapLogin against a real slapd', { skip: slapdAvailable() ? false : 'slapd is not installed' }, async () => {
    const slapd: Slapd = await startSlapd();
    try {
      await root.enableAuth({ mount_point: 'ldap', type: 'ldap' });
      await root.write('auth/ldap/config', { url: slapd.url, userdn: PEOPLE_DN, userattr: 'uid', groupdn: GROUPS_DN, binddn: SEARCH_BIND_DN, bindpass: SEARCH_BIND_PASSWORD });
      await root.write('auth/ldap/groups/engineers', { policies: 'dev' });
      await root.write('auth/ldap/groups/admins', { policies: 'admin' });
      assert.equal((await root.read('auth/ldap/config')).data.bindpass, undefined);

      const alice = server.vault('');
      const login = await alice.ldapLogin({ username: 'alice', password: USERS.alice.password });
      assert.deepEqual([login.auth.policies, login.auth.metadata], [['default', 'dev'], { username: 'alice' }]);
      await readsExactly(alice, ['dev']);
      const bob = server.vault('');
      await bob.ldapLogin({ username: 'bob', password: USERS.bob.password });
      await readsExactly(bob, ['admin', 'dev']);
      assert.equal((await bob.tokenLookupSelf()).data.display_name, 'ldap-bob');
      await failsWith(server.vault('').ldapLogin({ username: 'alice', password: 'wrong' }), 400, 'ldap operation failed: failed to bind as user');
    } finally {
      await slapd.stop();
    }
  });
});

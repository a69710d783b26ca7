// The seed's secrets-service flows with node-vault against a dev server on loopback.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { devServer, http, ROOT, vault } from './helpers.js';
import type { SecretsService } from '../../src/secrets/server.js';

let server: SecretsService;
before(async () => {
  server = await devServer();
});
after(async () => {
  await server.close();
});

describe('tokens with node-vault', () => {
  test('root creates a token with the seed options; lookup by accessor, capabilities, renew, revoke', async () => {
    const admin = vault(server.url, ROOT);
    await admin.addPolicy({ name: 'web', rules: 'path "secret/data/web/*" { capabilities = ["create", "read", "update", "list"] }' });
    const created = await admin.tokenCreate({ policies: ['web'], ttl: '20m', display_name: 'ci', meta: { team: 'blue' } });
    const auth = created.auth;
    assert.match(auth.client_token, /^hvs\.[0-9A-Za-z]{24}$/);
    assert.match(auth.accessor, /^[0-9A-Za-z]{24}$/);
    assert.deepEqual(auth.policies, ['default', 'web']);
    assert.deepEqual(auth.token_policies, ['default', 'web']);
    assert.equal(auth.lease_duration, 1200);
    assert.equal(auth.renewable, true);
    assert.equal(auth.orphan, false);
    assert.equal(auth.token_type, 'service');
    assert.deepEqual(auth.metadata, { team: 'blue' });

    // node-vault switched to the child token after tokenCreate; go back to root.
    const root = vault(server.url, ROOT);
    const byAccessor = await root.tokenLookupAccessor({ accessor: auth.accessor });
    assert.equal(byAccessor.data.id, '');
    assert.equal(byAccessor.data.display_name, 'token-ci');
    assert.equal(byAccessor.data.path, 'auth/token/create');
    assert.deepEqual(byAccessor.data.policies, ['default', 'web']);
    assert.ok(byAccessor.data.ttl > 1190 && byAccessor.data.ttl <= 1200);

    const caps = await root.write('sys/capabilities', { token: auth.client_token, paths: ['secret/data/web/app', 'sys/mounts'] });
    assert.deepEqual(caps.data, { 'secret/data/web/app': ['create', 'list', 'read', 'update'], 'sys/mounts': ['deny'] });
    assert.deepEqual(caps['secret/data/web/app'], ['create', 'list', 'read', 'update'], 'copied to the top level');

    const renewed = await root.write('auth/token/renew-accessor', { accessor: auth.accessor, increment: '10m' });
    assert.equal(renewed.auth.client_token, '');
    assert.equal(renewed.auth.lease_duration, 600);

    await root.tokenRevokeAccessor({ accessor: auth.accessor });
    const gone = await http(server.url, 'GET', 'auth/token/lookup-self', { token: auth.client_token });
    assert.deepEqual([gone.status, gone.body], [403, { errors: ['permission denied'] }]);
  });

  test('a token created with no options by root is a non-expiring root token', async () => {
    const root = vault(server.url, ROOT);
    const created = await root.tokenCreate();
    assert.deepEqual(created.auth.policies, ['root']);
    assert.equal(created.auth.lease_duration, 0);
    assert.equal(created.auth.renewable, false);
  });

  test('revoking a parent revokes its children; revoke-orphan keeps them', async () => {
    const root = vault(server.url, ROOT);
    await root.write('sys/policies/acl/maker', { policy: 'path "auth/token/create" { capabilities = ["update"] }' });
    const parent = (await root.tokenCreate({ policies: ['maker'] })).auth.client_token;
    const child = (await vault(server.url, parent).tokenCreate({ policies: ['maker'] })).auth;
    const grandchild = (await vault(server.url, child.client_token).tokenCreate()).auth.client_token;
    const orphan = (await vault(server.url, ROOT).tokenCreateOrphan({ policies: ['default'] })).auth;
    assert.equal(orphan.orphan, true);
    await vault(server.url, ROOT).tokenRevoke({ token: parent });
    for (const token of [parent, child.client_token, grandchild]) {
      const r = await http(server.url, 'GET', 'auth/token/lookup-self', { token });
      assert.equal(r.status, 403, `revoked: ${token}`);
    }
    assert.equal((await http(server.url, 'GET', 'auth/token/lookup-self', { token: orphan.client_token })).status, 200);

    const p2 = (await vault(server.url, ROOT).tokenCreate({ policies: ['maker'] })).auth.client_token;
    const c2 = (await vault(server.url, p2).tokenCreate({ policies: ['default'] })).auth.client_token;
    await vault(server.url, ROOT).tokenRevokeOrphan({ token: p2 });
    const lookup = await http(server.url, 'GET', 'auth/token/lookup-self', { token: c2 });
    assert.equal(lookup.status, 200);
    assert.equal(lookup.body.data.orphan, true);
  });

  test('an accessor can look up, renew and revoke, but cannot be used as a token', async () => {
    const root = vault(server.url, ROOT);
    const { accessor } = (await root.tokenCreate({ policies: ['default'], ttl: '1h' })).auth;
    const asToken = await http(server.url, 'GET', 'secret/data/anything', { token: accessor });
    assert.deepEqual([asToken.status, asToken.body], [403, { errors: ['permission denied'] }]);
    const create = await http(server.url, 'POST', 'auth/token/create', { token: accessor, body: {} });
    assert.equal(create.status, 403);
  });

  test('LIST auth/token/accessors needs sudo; an empty list is a 404', async () => {
    const root = vault(server.url, ROOT);
    const keys = (await root.tokenAccessors()).data.keys as string[];
    assert.ok(keys.length >= 1);
    const plain = (await vault(server.url, ROOT).tokenCreate({ policies: ['default'] })).auth.client_token;
    const denied = await http(server.url, 'LIST', 'auth/token/accessors', { token: plain });
    assert.deepEqual([denied.status, denied.body], [403, { errors: ['1 error occurred:\n\t* permission denied\n\n'] }]);
    const empty = await http(server.url, 'LIST', 'secret/metadata/nothing-here', { token: ROOT });
    assert.deepEqual([empty.status, empty.body], [404, { errors: [] }]);
  });

  test('policy limits: child policies must be a subset, num_uses, batch tokens', async () => {
    await vault(server.url, ROOT).write('sys/policies/acl/maker', { policy: 'path "auth/token/create" { capabilities = ["update"] }' });
    const web = (await vault(server.url, ROOT).tokenCreate({ policies: ['web', 'maker'] })).auth.client_token;
    await assert.rejects(vault(server.url, web).tokenCreate({ policies: ['admin'] }), /child policies must be subset of parent/);
    const child = (await vault(server.url, web).tokenCreate({ policies: ['web'] })).auth;
    assert.deepEqual(child.policies, ['default', 'web']);
    const once = (await vault(server.url, ROOT).tokenCreate({ policies: ['default'], num_uses: 1 })).auth.client_token;
    assert.equal((await http(server.url, 'GET', 'auth/token/lookup-self', { token: once })).status, 200);
    assert.equal((await http(server.url, 'GET', 'auth/token/lookup-self', { token: once })).status, 403, 'used up');
    const batch = (await http(server.url, 'POST', 'auth/token/create', { token: ROOT, body: { type: 'batch', policies: ['default'], ttl: '1h' } })).body.auth;
    assert.match(batch.client_token, /^hvb\./);
    assert.equal(batch.accessor, '');
    const renew = await http(server.url, 'POST', 'auth/token/renew-self', { token: batch.client_token, body: {} });
    assert.deepEqual([renew.status, renew.body], [400, { errors: ['batch tokens cannot be renewed'] }]);
  });
});

describe('KV with node-vault', () => {
  test('the seed pair: POST secret/apikey/<name> {apiKey} then GET secret/data/apikey/<name>', async () => {
    const written = await http(server.url, 'POST', 'secret/apikey/billing', { token: ROOT, body: { apiKey: 'k-123' }, headers: { 'X-Secrets-Token': ROOT } });
    assert.equal(written.status, 200);
    assert.match(written.body.warnings[0], /secret\/data\/apikey\/billing/);
    const read = await http(server.url, 'GET', 'secret/data/apikey/billing', { headers: { 'X-Secrets-Token': ROOT } });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body.data.data, { apiKey: 'k-123' });
    const viaClient = await vault(server.url, ROOT).read('secret/data/apikey/billing');
    assert.deepEqual(viaClient.data.data, { apiKey: 'k-123' });
  });

  test('KV v2: versions, cas, metadata, delete and undelete, destroy', async () => {
    const client = vault(server.url, ROOT);
    const v1 = await client.write('secret/data/app/db', { data: { password: 'one' } });
    assert.equal(v1.data.version, 1);
    await client.write('secret/data/app/db', { data: { password: 'two' }, options: { cas: 1 } });
    await assert.rejects(client.write('secret/data/app/db', { data: { password: 'x' }, options: { cas: 1 } }), /check-and-set parameter did not match the current version/);
    assert.deepEqual((await client.read('secret/data/app/db')).data.data, { password: 'two' });
    assert.deepEqual((await client.read('secret/data/app/db?version=1')).data.data, { password: 'one' });
    const list = await client.list('secret/metadata/app');
    assert.deepEqual(list.data.keys, ['db']);
    const meta = await client.read('secret/metadata/app/db');
    assert.equal(meta.data.current_version, 2);
    await client.delete('secret/data/app/db');
    const deleted = await http(server.url, 'GET', 'secret/data/app/db', { token: ROOT });
    assert.equal(deleted.status, 404);
    assert.equal(deleted.body.data.data, null);
    assert.notEqual(deleted.body.data.metadata.deletion_time, '');
    await client.write('secret/undelete/app/db', { versions: [2] });
    assert.deepEqual((await client.read('secret/data/app/db')).data.data, { password: 'two' });
    await client.write('secret/destroy/app/db', { versions: [1] });
    const destroyed = await http(server.url, 'GET', 'secret/data/app/db?version=1', { token: ROOT });
    assert.equal(destroyed.status, 404);
    assert.equal(destroyed.body.data.metadata.destroyed, true);
  });

  test('KV v1 on a second mount; several mounts of one type are independent', async () => {
    const client = vault(server.url, ROOT);
    await client.mount({ mount_point: 'kv1', type: 'kv', description: 'v1' });
    await client.mount({ mount_point: 'kv1b', type: 'kv' });
    await client.write('kv1/team/app', { user: 'svc', ttl: '1h' });
    const read = await client.read('kv1/team/app');
    assert.deepEqual(read.data, { user: 'svc', ttl: '1h' });
    assert.equal(read.lease_duration, 3600);
    await assert.rejects(client.read('kv1b/team/app'), /Status 404/);
    assert.deepEqual((await client.list('kv1/team')).data.keys, ['app']);
    const mounts = await client.mounts();
    assert.equal(mounts['kv1/'].type, 'kv');
    assert.deepEqual(mounts.data['secret/'].options, { version: '2' });
    const ui = await client.read('sys/internal/ui/mounts/secret/app/db');
    assert.equal(ui.data.path, 'secret/');
    assert.deepEqual(ui.data.options, { version: '2' });
  });

  test('the ACL decides: read-only policy, denied write, sudo paths', async () => {
    const root = vault(server.url, ROOT);
    await root.write('sys/policies/acl/reader', { policy: JSON.stringify({ path: { 'secret/data/shared/*': { capabilities: ['read'] } } }) });
    const reader = (await root.tokenCreate({ policies: ['reader'] })).auth.client_token;
    await vault(server.url, ROOT).write('secret/data/shared/a', { data: { v: '1' } });
    assert.deepEqual((await vault(server.url, reader).read('secret/data/shared/a')).data.data, { v: '1' });
    const write = await http(server.url, 'POST', 'secret/data/shared/a', { token: reader, body: { data: { v: '2' } } });
    assert.deepEqual([write.status, write.body], [403, { errors: ['1 error occurred:\n\t* permission denied\n\n'] }]);
    const seal = await http(server.url, 'PUT', 'sys/seal', { token: reader });
    assert.equal(seal.status, 403);
  });
});

describe('token roles with node-vault', () => {
  test('a role limits policies, makes orphans and periodic tokens, and names the path', async () => {
    const root = vault(server.url, ROOT);
    await root.addTokenRole({ role_name: 'ci', allowed_policies: 'web, ops', orphan: true, period: 3600, renewable: true, path_suffix: 'v1' });
    const role = await vault(server.url, ROOT).getTokenRole({ role_name: 'ci' });
    assert.deepEqual(role.data.allowed_policies, ['ops', 'web']);
    assert.equal(role.data.token_period, 3600);
    const created = (await vault(server.url, ROOT).tokenCreateRole({ role_name: 'ci', policies: ['web'] })).auth;
    assert.equal(created.orphan, true);
    assert.equal(created.lease_duration, 3600);
    assert.deepEqual(created.policies, ['default', 'web']);
    const lookup = await http(server.url, 'POST', 'auth/token/lookup', { token: ROOT, body: { token: created.client_token } });
    assert.equal(lookup.body.data.path, 'auth/token/create/ci/v1');
    assert.equal(lookup.body.data.role, 'ci');
    const refused = await http(server.url, 'POST', 'auth/token/create/ci', { token: ROOT, body: { policies: ['admin'] } });
    assert.equal(refused.status, 400);
    assert.match(refused.body.errors[0], /must be subset of the role's allowed policies/);
    const roles = await vault(server.url, ROOT).tokenRoles();
    assert.deepEqual(roles.data.keys, ['ci']);
  });
});

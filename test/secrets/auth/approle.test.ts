// The AppRole method driven directly on in-memory storage: every endpoint of vault.md §5.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness, type Harness } from './backend-harness.js';
import { approleRegistration } from '../../../src/secrets/auth/approle/backend.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function roleWithSecret(h: Harness, role = 'web', body: Record<string, unknown> = {}) {
  await h.call('write', `role/${role}`, { token_policies: 'dev', ...body });
  const roleId = ((await h.call('read', `role/${role}/role-id`))!.data as { role_id: string }).role_id;
  const secret = (await h.call('write', `role/${role}/secret-id`))!.data as { secret_id: string; secret_id_accessor: string };
  return { roleId, ...secret };
}

test("roles: node-vault's addApproleRole fields (legacy names) are honoured and echoed; names are case-insensitive", async () => {
  const h = await harness(approleRegistration);
  await h.refuses('list', 'role/', {}, 404, []);
  // Exactly what node-vault 0.12 sends.
  const response = await h.call('write', 'role/MyApp', {
    bind_secret_id: true,
    bound_cidr_list: '127.0.0.0/8',
    policies: 'dev, ops',
    secret_id_num_uses: 10,
    secret_id_ttl: '1h',
    token_num_uses: 0,
    token_ttl: '20m',
    token_max_ttl: '30m',
    period: 0,
  });
  assert.equal(response, undefined, '204');
  assert.deepEqual((await h.call('read', 'role/myapp'))?.data, {
    bind_secret_id: true,
    local_secret_ids: false,
    secret_id_bound_cidrs: ['127.0.0.0/8'],
    bound_cidr_list: ['127.0.0.0/8'],
    secret_id_num_uses: 10,
    secret_id_ttl: 3600,
    token_bound_cidrs: [],
    token_explicit_max_ttl: 0,
    token_max_ttl: 1800,
    token_no_default_policy: false,
    token_num_uses: 0,
    token_period: 0,
    period: 0,
    token_policies: ['dev', 'ops'],
    policies: ['dev', 'ops'],
    token_ttl: 1200,
    token_type: 'default',
  });
  assert.deepEqual((await h.call('list', 'role/'))?.data, { keys: ['myapp'] });
  // A policy that does not exist is accepted with Vault's warning.
  assert.deepEqual(await h.call('write', 'role/other', { token_policies: 'nope' }), { warnings: ['Policy "nope" does not exist'] });
});

test('role-id: stable across reads and updates, settable, unique; secret-id: new on every write', async () => {
  const h = await harness(approleRegistration);
  await h.call('write', 'role/web', { token_policies: 'dev' });
  const first = (await h.call('read', 'role/web/role-id'))!.data as { role_id: string };
  assert.match(first.role_id, UUID);
  await h.call('write', 'role/web', { token_ttl: '5m' });
  assert.deepEqual((await h.call('read', 'role/web/role-id'))!.data, first);

  const a = (await h.call('write', 'role/web/secret-id'))!.data as Record<string, unknown>;
  const b = (await h.call('write', 'role/web/secret-id'))!.data as Record<string, unknown>;
  assert.match(String(a.secret_id), UUID);
  assert.match(String(a.secret_id_accessor), UUID);
  assert.notEqual(a.secret_id, b.secret_id);
  assert.deepEqual([a.secret_id_num_uses, a.secret_id_ttl], [0, 0]);
  const stored = [...h.entries.values()].map((v) => Buffer.from(v).toString()).join('\n');
  assert.ok(!stored.includes(String(a.secret_id)), 'secret IDs are not stored in clear');

  await h.call('write', 'role/web/role-id', { role_id: 'my-role-id' });
  assert.deepEqual((await h.call('read', 'role/web/role-id'))!.data, { role_id: 'my-role-id' });
  await h.refuses('write', 'login', { role_id: first.role_id, secret_id: a.secret_id }, 400, ['invalid role or secret ID']);
  assert.ok((await h.call('write', 'login', { role_id: 'my-role-id', secret_id: a.secret_id }))?.auth);
  await h.call('write', 'role/db', { token_policies: 'dev' });
  await h.refuses('write', 'role/db/role-id', { role_id: 'my-role-id' }, 400, ['role_id already in use']);
});

test('login: the auth block has the role policies, role_name metadata (plus secret-id metadata), alias and internal data', async () => {
  const h = await harness(approleRegistration);
  await h.call('write', 'role/web', { token_policies: 'dev', token_ttl: '20m' });
  const roleId = ((await h.call('read', 'role/web/role-id'))!.data as { role_id: string }).role_id;
  const secret = (await h.call('write', 'role/web/secret-id', { metadata: '{"host":"build-7"}' }))!.data as { secret_id: string };
  const response = await h.call('write', 'login', { role_id: roleId, secret_id: secret.secret_id });
  assert.deepEqual(response, {
    auth: {
      policies: ['dev'],
      ttl: 1200,
      maxTtl: 0,
      explicitMaxTtl: 0,
      period: 0,
      numUses: 0,
      noDefaultPolicy: false,
      boundCidrs: [],
      tokenType: 'default',
      displayName: '',
      metadata: { host: 'build-7', role_name: 'web' },
      internalData: { role_name: 'web' },
      alias: { name: roleId, metadata: { host: 'build-7', role_name: 'web' } },
    },
  });
});

test('login: every bad combination is 400 invalid role or secret ID; missing fields are named', async () => {
  const h = await harness(approleRegistration);
  const web = await roleWithSecret(h, 'web');
  const db = await roleWithSecret(h, 'db');
  await h.refuses('write', 'login', {}, 400, ['missing role_id']);
  await h.refuses('write', 'login', { role_id: web.roleId }, 400, ['missing secret_id']);
  await h.refuses('write', 'login', { role_id: 'nope', secret_id: web.secret_id }, 400, ['invalid role or secret ID']);
  await h.refuses('write', 'login', { role_id: web.roleId, secret_id: 'nope' }, 400, ['invalid role or secret ID']);
  await h.refuses('write', 'login', { role_id: web.roleId, secret_id: db.secret_id }, 400, ['invalid role or secret ID']);
  await h.refuses('write', 'login', { role_id: db.roleId, secret_id: web.secret_id }, 400, ['invalid role or secret ID']);
});

test('num_uses counts down per login and the secret ID is gone at zero; per-secret limits stay within the role', async () => {
  const h = await harness(approleRegistration);
  await h.call('write', 'role/web', { token_policies: 'dev', secret_id_num_uses: 3 });
  const roleId = ((await h.call('read', 'role/web/role-id'))!.data as { role_id: string }).role_id;
  await h.refuses('write', 'role/web/secret-id', { num_uses: 5 }, 400, ["num_uses cannot be higher than the role's secret_id_num_uses"]);
  await h.refuses('write', 'role/web/secret-id', { num_uses: -1 }, 400, ['num_uses cannot be negative']);
  const secret = (await h.call('write', 'role/web/secret-id', { num_uses: 2 }))!.data as { secret_id: string; secret_id_num_uses: number };
  assert.equal(secret.secret_id_num_uses, 2);
  assert.ok((await h.call('write', 'login', { role_id: roleId, secret_id: secret.secret_id }))?.auth);
  const looked = (await h.call('write', 'role/web/secret-id/lookup', { secret_id: secret.secret_id }))!.data as Record<string, unknown>;
  assert.equal(looked.secret_id_num_uses, 1);
  assert.ok((await h.call('write', 'login', { role_id: roleId, secret_id: secret.secret_id }))?.auth);
  await h.refuses('write', 'login', { role_id: roleId, secret_id: secret.secret_id }, 400, ['invalid role or secret ID']);
  assert.equal(await h.call('write', 'role/web/secret-id/lookup', { secret_id: secret.secret_id }), undefined, 'spent: 204');
  const defaulted = (await h.call('write', 'role/web/secret-id'))!.data as { secret_id_num_uses: number };
  assert.equal(defaulted.secret_id_num_uses, 3, "0 takes the role's value");
});

test('ttl: a secret ID expires; per-secret ttl cannot exceed the role; tidy removes expired ones', async () => {
  const h = await harness(approleRegistration);
  await h.call('write', 'role/web', { token_policies: 'dev', secret_id_ttl: '10m' });
  const roleId = ((await h.call('read', 'role/web/role-id'))!.data as { role_id: string }).role_id;
  await h.refuses('write', 'role/web/secret-id', { ttl: '1h' }, 400, ["ttl cannot be longer than the role's secret_id_ttl"]);
  const short = (await h.call('write', 'role/web/secret-id', { ttl: 1 }))!.data as { secret_id: string; secret_id_ttl: number };
  const other = (await h.call('write', 'role/web/secret-id', { ttl: 1 }))!.data as { secret_id: string; secret_id_accessor: string };
  const lasting = (await h.call('write', 'role/web/secret-id'))!.data as { secret_id_ttl: number; secret_id_accessor: string };
  assert.deepEqual([short.secret_id_ttl, lasting.secret_id_ttl], [1, 600]);
  const entry = (await h.call('write', 'role/web/secret-id/lookup', { secret_id: short.secret_id }))!.data as Record<string, string>;
  assert.equal(Date.parse(entry.expiration_time!) - Date.parse(entry.creation_time!), 1000);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await h.refuses('write', 'login', { role_id: roleId, secret_id: short.secret_id }, 400, ['invalid role or secret ID']);
  const before = h.entries.size;
  assert.deepEqual(await h.call('write', 'tidy/secret-id'), {
    statusCode: 202,
    warnings: ["Tidy operation successfully started. Any information from the operation will be printed to Vault's server logs."],
  });
  assert.equal(h.entries.size, before - 2, 'the other expired secret ID and its accessor are gone');
  await h.refuses('write', 'role/web/secret-id-accessor/lookup', { secret_id_accessor: other.secret_id_accessor }, 404, [
    `failed to find accessor entry for secret_id_accessor: "${other.secret_id_accessor}"`,
  ]);
  assert.deepEqual((await h.call('list', 'role/web/secret-id/'))!.data, { keys: [lasting.secret_id_accessor] });
});

test('CIDR binding: secret-id cidr_list and role secret_id_bound_cidrs are checked against the client address', async () => {
  const h = await harness(approleRegistration);
  await h.call('write', 'role/web', { token_policies: 'dev', secret_id_bound_cidrs: '10.0.0.0/8' });
  const roleId = ((await h.call('read', 'role/web/role-id'))!.data as { role_id: string }).role_id;
  await h.refuses('write', 'role/web/secret-id', { cidr_list: '192.168.0.0/16' }, 400, [
    `failed to verify the CIDR restrictions set on the secret ID: "192.168.0.0/16" in cidr_list is not within the role's bounds`,
  ]);
  const secret = (await h.call('write', 'role/web/secret-id', { cidr_list: '10.1.0.0/16' }))!.data as { secret_id: string };
  await h.refuses('write', 'login', { role_id: roleId, secret_id: secret.secret_id }, 400, [
    'source address "10.2.0.1" unauthorized through CIDR restrictions on the secret ID',
  ], { remoteAddress: '10.2.0.1' });
  assert.ok((await h.call('write', 'login', { role_id: roleId, secret_id: secret.secret_id }, { remoteAddress: '10.1.2.3' }))?.auth);

  // Without bind_secret_id a CIDR bound is the constraint.
  await h.refuses('write', 'role/open', { bind_secret_id: false }, 400, ['at least one constraint should be enabled on the role']);
  await h.call('write', 'role/open', { bind_secret_id: false, secret_id_bound_cidrs: '10.0.0.0/8', token_policies: 'dev' });
  const openId = ((await h.call('read', 'role/open/role-id'))!.data as { role_id: string }).role_id;
  assert.ok((await h.call('write', 'login', { role_id: openId }, { remoteAddress: '10.9.9.9' }))?.auth);
  await h.refuses('write', 'login', { role_id: openId }, 400, ['source address "127.0.0.1" unauthorized by CIDR restrictions on the role']);
  await h.refuses('write', 'role/open/secret-id', {}, 400, ['bind_secret_id is not set on the role']);
});

test('custom secret IDs, lookup/destroy by ID and by accessor', async () => {
  const h = await harness(approleRegistration);
  await h.call('write', 'role/web', { token_policies: 'dev' });
  const roleId = ((await h.call('read', 'role/web/role-id'))!.data as { role_id: string }).role_id;
  await h.refuses('write', 'role/web/custom-secret-id', {}, 400, ['missing secret_id']);
  const custom = (await h.call('write', 'role/web/custom-secret-id', { secret_id: 'my-secret' }))!.data as Record<string, unknown>;
  assert.equal(custom.secret_id, 'my-secret');
  await h.refuses('write', 'role/web/custom-secret-id', { secret_id: 'my-secret' }, 400, ['SecretID is already registered']);
  const byAccessor = (await h.call('write', 'role/web/secret-id-accessor/lookup', { secret_id_accessor: custom.secret_id_accessor }))!.data;
  const byId = (await h.call('write', 'role/web/secret-id/lookup', { secret_id: 'my-secret' }))!.data;
  assert.deepEqual(byAccessor, byId);
  assert.deepEqual(Object.keys(byId!).sort(), [
    'cidr_list', 'creation_time', 'expiration_time', 'last_updated_time', 'metadata', 'secret_id_accessor', 'secret_id_num_uses', 'secret_id_ttl', 'token_bound_cidrs',
  ]);
  assert.equal((byId as Record<string, unknown>).expiration_time, '0001-01-01T00:00:00Z');
  await h.refuses('write', 'role/web/secret-id/lookup', {}, 400, ['missing secret_id']);

  assert.equal(await h.call('write', 'role/web/secret-id/destroy', { secret_id: 'my-secret' }), undefined);
  await h.refuses('write', 'login', { role_id: roleId, secret_id: 'my-secret' }, 400, ['invalid role or secret ID']);

  const other = (await h.call('write', 'role/web/secret-id'))!.data as { secret_id: string; secret_id_accessor: string };
  await h.call('write', 'role/web/secret-id-accessor/destroy', { secret_id_accessor: other.secret_id_accessor });
  await h.refuses('write', 'login', { role_id: roleId, secret_id: other.secret_id }, 400, ['invalid role or secret ID']);
  await h.refuses('list', 'role/web/secret-id/', {}, 404, []);
  await h.refuses('write', 'role/ghost/secret-id', {}, 404, ['role "ghost" does not exist']);
});

test('single-property endpoints read, set and reset one field', async () => {
  const h = await harness(approleRegistration);
  await h.call('write', 'role/web', { token_policies: 'dev', secret_id_ttl: '1h' });
  assert.deepEqual((await h.call('read', 'role/web/policies'))!.data, { token_policies: ['dev'], policies: ['dev'] });
  await h.call('write', 'role/web/policies', { policies: 'ops,web' });
  assert.deepEqual((await h.call('read', 'role/web/policies'))!.data, { token_policies: ['ops', 'web'], policies: ['ops', 'web'] });
  await h.call('write', 'role/web/token-ttl', { token_ttl: '15m' });
  assert.deepEqual((await h.call('read', 'role/web/token-ttl'))!.data, { token_ttl: 900 });
  assert.deepEqual((await h.call('read', 'role/web/secret-id-ttl'))!.data, { secret_id_ttl: 3600 });
  await h.call('delete', 'role/web/secret-id-ttl');
  assert.deepEqual((await h.call('read', 'role/web/secret-id-ttl'))!.data, { secret_id_ttl: 0 });
  await h.refuses('write', 'role/web/secret-id-num-uses', {}, 400, ['missing secret_id_num_uses']);
  await h.refuses('write', 'role/web/secret-id-num-uses', { secret_id_num_uses: -2 }, 400, ['secret_id_num_uses cannot be negative']);
  await h.refuses('write', 'role/web/bind-secret-id', { bind_secret_id: false }, 400, ['at least one constraint should be enabled on the role']);
  assert.deepEqual((await h.call('read', 'role/web/local-secret-ids'))!.data, { local_secret_ids: false });
  await h.refuses('write', 'role/web', { local_secret_ids: true }, 400, ['local_secret_ids can only be modified during role creation']);
  await h.refuses('read', 'role/ghost/policies', {}, 404, []);
});

test('deleting a role deletes its secret IDs and its role ID; login lock-out per role ID', async () => {
  const h = await harness(approleRegistration);
  const web = await roleWithSecret(h, 'web');
  const keysBefore = h.entries.size;
  await h.call('delete', 'role/web');
  await h.refuses('write', 'login', { role_id: web.roleId, secret_id: web.secret_id }, 400, ['invalid role or secret ID']);
  assert.equal(h.entries.size, keysBefore - 4, 'role, role_id index, secret ID, accessor');

  const db = await roleWithSecret(h, 'db');
  for (let i = 0; i < 5; i++) await h.refuses('write', 'login', { role_id: db.roleId, secret_id: 'wrong' }, 400, ['invalid role or secret ID']);
  await h.refuses('write', 'login', { role_id: db.roleId, secret_id: db.secret_id }, 403, ['permission denied']);
});

test('renew: refused when the role is gone or its policies changed; TTLs follow the role', async () => {
  const h = await harness(approleRegistration);
  const web = await roleWithSecret(h, 'web', { token_ttl: '20m' });
  const auth = (await h.call('write', 'login', { role_id: web.roleId, secret_id: web.secret_id }))!.auth!;
  await h.call('write', 'role/web/token-ttl', { token_ttl: '40m' });
  assert.equal((await h.renew(auth, 'login')).ttl, 2400);
  await h.call('write', 'role/web/policies', { token_policies: 'admin' });
  await assert.rejects(h.renew(auth, 'login'), { message: 'policies have changed, not renewing' });
  await h.call('delete', 'role/web');
  await assert.rejects(h.renew(auth, 'login'), { message: 'role "web" does not exist during renewal' });
});

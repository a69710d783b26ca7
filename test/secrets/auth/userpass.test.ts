// The userpass method driven directly on in-memory storage: CRUD, bcrypt, login, lock-out, renewal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import bcrypt from 'bcryptjs';
import { harness } from './backend-harness.js';
import { userpassRegistration } from '../../../src/secrets/auth/userpass/backend.js';
import { LoginLockout } from '../../../src/secrets/auth/shared/lockout.js';
import { PermissionDeniedError } from '../../../src/secrets/errors.js';

test('users: create, read (no password), list, update policies and password, delete', async () => {
  const h = await harness(userpassRegistration);
  await h.refuses('list', 'users/', {}, 404, []);
  assert.equal(await h.call('write', 'users/Alice', { password: 'pw1', policies: 'dev, ops', token_ttl: '20m' }), undefined);
  assert.deepEqual((await h.call('read', 'users/alice'))?.data, {
    token_bound_cidrs: [],
    token_explicit_max_ttl: 0,
    token_max_ttl: 0,
    token_no_default_policy: false,
    token_num_uses: 0,
    token_period: 0,
    token_policies: ['dev', 'ops'],
    token_ttl: 1200,
    token_type: 'default',
    policies: ['dev', 'ops'],
  });
  const stored = Buffer.from(h.entries.get('user/alice')!).toString();
  assert.ok(!stored.includes('pw1'), 'password not stored in clear');
  const hash = JSON.parse(stored).passwordHash as string;
  assert.equal(bcrypt.getRounds(hash), 10, 'bcrypt cost 10');

  await h.call('write', 'users/bob', { password: 'pw2', token_policies: ['web'] });
  assert.deepEqual((await h.call('list', 'users/'))?.data, { keys: ['alice', 'bob'] });
  assert.equal(((await h.call('read', 'users/bob'))?.data as Record<string, unknown>).policies, undefined, 'legacy name only when used');

  await h.call('write', 'users/alice/policies', { token_policies: 'admin' });
  const afterPolicies = (await h.call('read', 'users/alice'))?.data as Record<string, unknown>;
  assert.deepEqual([afterPolicies.token_policies, afterPolicies.policies, afterPolicies.token_ttl], [['admin'], undefined, 1200]);

  await h.call('write', 'users/alice/password', { password: 'pw3' });
  await h.refuses('write', 'login/alice', { password: 'pw1' }, 400, ['invalid username or password']);
  assert.ok((await h.call('write', 'login/alice', { password: 'pw3' }))?.auth);

  await h.call('write', 'users/alice', { token_ttl: '1h' });
  assert.ok((await h.call('write', 'login/alice', { password: 'pw3' }))?.auth, 'update without password keeps it');

  await h.call('delete', 'users/alice');
  await h.refuses('read', 'users/alice', {}, 404, []);
  await h.refuses('write', 'login/alice', { password: 'pw3' }, 400, ['invalid username or password']);
});

test('bad input: missing password on create, unknown user for password/policies, bad fields', async () => {
  const h = await harness(userpassRegistration);
  await h.refuses('write', 'users/carol', { policies: 'x' }, 400, ['missing password']);
  await h.refuses('write', 'users/ghost/password', { password: 'x' }, 400, ['username does not exist']);
  await h.refuses('write', 'users/ghost/policies', { token_policies: 'x' }, 400, ['username does not exist']);
  await h.refuses('write', 'users/carol', { password: 'x', token_ttl: 'soon' }, 400, [
    'error converting input soon for field "token_ttl": time: invalid duration "soon"',
  ]);
  await h.refuses('write', 'users/carol', { password: 'x', token_type: 'weird' }, 400, [`invalid 'token_type' value "weird"`]);
  await h.refuses('write', 'users/carol', { password: 'x', token_bound_cidrs: '10.0.0.0/99' }, 400, [
    'invalid CIDR block "10.0.0.0/99" in token_bound_cidrs',
  ]);
  await h.refuses('write', 'users/carol', { password: 'x', token_ttl: '2h', token_max_ttl: '1h' }, 400, [
    "'token_ttl' cannot be greater than 'token_max_ttl'",
  ]);
  await h.refuses('write', 'login/carol', {}, 400, ['missing password']);
  assert.equal(h.entries.size, 0, 'nothing stored by refused writes');
});

test('login: auth block with policies, metadata, display name, alias and token parameters; username is case-insensitive', async () => {
  const h = await harness(userpassRegistration);
  await h.call('write', 'users/alice', { password: 'pw', token_policies: 'dev', token_ttl: '20m', token_max_ttl: '1h', token_num_uses: 3 });
  const response = await h.call('write', 'login/ALICE', { password: 'pw' });
  assert.deepEqual(response, {
    auth: {
      policies: ['dev'],
      ttl: 1200,
      maxTtl: 3600,
      explicitMaxTtl: 0,
      period: 0,
      numUses: 3,
      noDefaultPolicy: false,
      boundCidrs: [],
      tokenType: 'default',
      displayName: 'alice',
      metadata: { username: 'alice' },
      alias: { name: 'alice' },
    },
  });
});

test('login: token_bound_cidrs refuses other client addresses with 403', async () => {
  const h = await harness(userpassRegistration);
  await h.call('write', 'users/alice', { password: 'pw', token_bound_cidrs: '10.0.0.0/8' });
  await h.refuses('write', 'login/alice', { password: 'pw' }, 403, ['permission denied'], { remoteAddress: '192.168.1.1' });
  assert.ok((await h.call('write', 'login/alice', { password: 'pw' }, { remoteAddress: '::ffff:10.1.2.3' }))?.auth);
});

test('lock-out: 5 failures lock the user (403 even with the right password); other users unaffected', async () => {
  const h = await harness(userpassRegistration);
  await h.call('write', 'users/alice', { password: 'pw' });
  await h.call('write', 'users/bob', { password: 'pw' });
  for (let i = 0; i < 5; i++) await h.refuses('write', 'login/alice', { password: 'wrong' }, 400, ['invalid username or password']);
  await h.refuses('write', 'login/alice', { password: 'pw' }, 403, ['permission denied']);
  assert.ok((await h.call('write', 'login/bob', { password: 'pw' }))?.auth);
  // A second mount of the same type has its own counts.
  const other = await harness(userpassRegistration, 'people');
  await other.call('write', 'users/alice', { password: 'pw' });
  assert.ok((await other.call('write', 'login/alice', { password: 'pw' }))?.auth);
});

test('LoginLockout: the lock expires, the count resets after a quiet period, success clears it', () => {
  let now = 0;
  const lockout = new LoginLockout({ threshold: 3, durationMs: 1000, counterResetMs: 500 }, () => now);
  const locked = () => {
    try {
      lockout.assertNotLocked('u');
      return false;
    } catch (error) {
      assert.ok(error instanceof PermissionDeniedError);
      return true;
    }
  };
  lockout.failed('u');
  lockout.failed('u');
  now = 600; // quiet for longer than counterReset: starts again
  lockout.failed('u');
  lockout.failed('u');
  assert.equal(locked(), false);
  lockout.failed('u');
  assert.equal(locked(), true);
  now = 1700;
  assert.equal(locked(), false, 'lock expired');
  lockout.failed('u');
  lockout.succeeded('u');
  lockout.failed('u');
  lockout.failed('u');
  assert.equal(locked(), false, 'success cleared the count');
});

test('renew: re-reads the user; refuses when the user is gone or the policies changed', async () => {
  const h = await harness(userpassRegistration);
  await h.call('write', 'users/alice', { password: 'pw', token_policies: 'dev', token_ttl: '20m' });
  const auth = (await h.call('write', 'login/alice', { password: 'pw' }))!.auth!;
  await h.call('write', 'users/alice', { token_ttl: '30m' });
  assert.equal((await h.renew({ ...auth, policies: ['default', 'dev'] }, 'login/alice')).ttl, 1800);
  await h.call('write', 'users/alice/policies', { token_policies: 'dev,ops' });
  await assert.rejects(h.renew(auth, 'login/alice'), { message: 'policies have changed, not renewing' });
  await h.call('delete', 'users/alice');
  await assert.rejects(h.renew(auth, 'login/alice'), { message: 'user no longer exists, not renewing' });
});

// The LDAP method driven directly, against a real OpenLDAP slapd started by the test.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { harness, type Harness } from './backend-harness.js';
import { GROUPS_DN, PEOPLE_DN, SEARCH_BIND_DN, SEARCH_BIND_PASSWORD, USERS, slapdAvailable, startSlapd, type Slapd } from './slapd.js';
import { ldapRegistration } from '../../../src/secrets/auth/ldap/backend.js';
import { commonName, escapeDnValue, renderFilter } from '../../../src/secrets/auth/ldap/directory.js';

const skip = slapdAvailable() ? false : 'slapd is not installed (Debian package slapd; .ci/run installs it)';

describe('ldap method against a real slapd', { skip }, () => {
  let slapd: Slapd;
  let tlsSlapd: Slapd;
  let h: Harness;

  before(async () => {
    [slapd, tlsSlapd] = await Promise.all([startSlapd(), startSlapd({ tls: true })]);
    h = await harness(ldapRegistration);
    await h.call('write', 'groups/engineers', { policies: 'dev' });
    await h.call('write', 'groups/admins', { policies: 'admin' });
    await h.call('write', 'groups/ops', { policies: 'ops' });
    await h.call('write', 'users/carol', { policies: 'carol-own', groups: 'engineers' });
  });
  after(async () => {
    await Promise.all([slapd?.stop(), tlsSlapd?.stop()]);
  });

  test('not configured: 400', async () => {
    const fresh = await harness(ldapRegistration);
    await fresh.refuses('write', 'login/alice', { password: 'x' }, 400, ['ldap backend not configured']);
  });

  test('config: defaults, write-only secrets never read back', async () => {
    await h.call('write', 'config', { url: slapd.url, userdn: PEOPLE_DN, userattr: 'uid', groupdn: GROUPS_DN, binddn: SEARCH_BIND_DN, bindpass: SEARCH_BIND_PASSWORD, request_timeout: '5s' });
    const data = (await h.call('read', 'config'))!.data!;
    assert.equal(data.bindpass, undefined);
    assert.equal(JSON.stringify(data).includes(SEARCH_BIND_PASSWORD), false);
    assert.deepEqual(
      [data.url, data.userattr, data.userfilter, data.groupfilter, data.groupattr, data.deny_null_bind, data.request_timeout, data.connection_timeout, data.tls_min_version],
      [slapd.url, 'uid', '({{.UserAttr}}={{.Username}})', '(|(memberUid={{.Username}})(member={{.UserDN}})(uniqueMember={{.UserDN}}))', 'cn', true, 5, 30, 'tls12'],
    );
    await h.refuses('write', 'config', { url: 'http://x' }, 400, ['invalid url "http://x": want ldap://host[:port] or ldaps://host[:port]']);
    await h.refuses('write', 'config', { tls_min_version: 'tls9' }, 400, ['error converting input tls9 for field "tls_min_version": must be one of tls10, tls11, tls12, tls13']);
  });

  test('search-then-bind with binddn: groups from member, uniqueMember and memberUid map to policies', async () => {
    await h.call('write', 'config', { url: slapd.url, userdn: PEOPLE_DN, userattr: 'uid', groupdn: GROUPS_DN, binddn: SEARCH_BIND_DN, bindpass: SEARCH_BIND_PASSWORD });
    const alice = (await h.call('write', 'login/alice', { password: USERS.alice.password }))!;
    assert.deepEqual([...alice.auth!.policies].sort(), ['dev', 'ops'], 'engineers (member) and ops (memberUid)');
    assert.deepEqual(alice.auth!.metadata, { username: 'alice' });
    assert.equal(alice.auth!.displayName, 'alice');
    assert.deepEqual([...alice.auth!.groupAliases!].sort(), ['engineers', 'ops']);
    const bob = (await h.call('write', 'login/bob', { password: USERS.bob.password }))!;
    assert.deepEqual([...bob.auth!.policies].sort(), ['admin', 'dev'], 'admins (uniqueMember) and engineers');
    const carol = (await h.call('write', 'login/carol', { password: USERS.carol.password }))!;
    assert.deepEqual(carol.auth!.policies, ['dev', 'carol-own'], 'local groups and policies of the user');
  });

  test('bind-as-user without binddn (DN from userattr + userdn), and a group filter of our own', async () => {
    await h.call('write', 'config', { binddn: '', bindpass: '', groupfilter: '(&(objectClass=groupOfNames)(member={{.UserDN}}))' });
    const alice = (await h.call('write', 'login/Alice', { password: USERS.alice.password }))!;
    assert.deepEqual(alice.auth!.policies, ['dev'], 'only groupOfNames groups match this filter');
    await h.call('write', 'config', { groupfilter: '(|(memberUid={{.Username}})(member={{.UserDN}})(uniqueMember={{.UserDN}}))' });
  });

  test('wrong password, unknown user, empty password: the spec 400s and no token', async () => {
    await h.refuses('write', 'login/alice', { password: 'wrong' }, 400, ['ldap operation failed: failed to bind as user']);
    await h.refuses('write', 'login/nobody', { password: 'x' }, 400, ['ldap operation failed: failed to bind as user']);
    await h.refuses('write', 'login/alice', { password: '' }, 400, ['password cannot be of zero length when passwordless binds are being denied']);
    await h.call('write', 'config', { binddn: SEARCH_BIND_DN, bindpass: SEARCH_BIND_PASSWORD });
    await h.refuses('write', 'login/nobody', { password: 'x' }, 400, ['ldap operation failed: unable to retrieve user bind DN']);
    await h.call('write', 'config', { bindpass: 'wrong' });
    await h.refuses('write', 'login/alice', { password: USERS.alice.password }, 400, ['ldap operation failed: unable to retrieve user bind DN']);
    await h.call('write', 'config', { bindpass: SEARCH_BIND_PASSWORD });
  });

  test('StartTLS: trusted with the CA, refused without it', async () => {
    const t = await harness(ldapRegistration);
    await t.call('write', 'groups/engineers', { policies: 'dev' });
    await t.call('write', 'config', { url: tlsSlapd.url, starttls: true, certificate: tlsSlapd.caCert, userdn: PEOPLE_DN, userattr: 'uid', groupdn: GROUPS_DN });
    assert.deepEqual((await t.call('write', 'login/bob', { password: USERS.bob.password }))!.auth!.policies, ['dev']);
    await t.call('write', 'config', { certificate: '' });
    await t.refuses('write', 'login/bob', { password: USERS.bob.password }, 400, ['ldap operation failed: failed to connect to LDAP server']);
    await t.call('write', 'config', { insecure_tls: true });
    assert.ok((await t.call('write', 'login/bob', { password: USERS.bob.password }))?.auth);
  });

  test('unreachable or silent server: 400 within the configured timeouts; the next URL in the list is tried', async () => {
    const silent = net.createServer(() => undefined); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      const t = await harness(ldapRegistration);
      await t.call('write', 'config', { url: `ldap://127.0.0.1:${port}`, userdn: PEOPLE_DN, userattr: 'uid', request_timeout: 1, connection_timeout: 1 });
      await t.refuses('write', 'login/alice', { password: USERS.alice.password }, 400, ['ldap operation failed: failed to connect to LDAP server']);
      await t.call('write', 'config', { url: `ldap://127.0.0.1:${port},${slapd.url}` });
      assert.ok((await t.call('write', 'login/alice', { password: USERS.alice.password }))?.auth);
    } finally {
      silent.close();
    }
  });

  test('a server that answers garbage (HTTP) is a 400, not a crash', async () => {
    const garbage = net.createServer((socket) => socket.end('HTTP/1.1 400 Bad Request\r\ncontent-type: text/html\r\n\r\n<html>nope</html>'));
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    try {
      const t = await harness(ldapRegistration);
      await t.call('write', 'config', { url: `ldap://127.0.0.1:${(garbage.address() as net.AddressInfo).port}`, userdn: PEOPLE_DN, userattr: 'uid', request_timeout: 1, connection_timeout: 1 });
      await t.refuses('write', 'login/alice', { password: USERS.alice.password }, 400, ['ldap operation failed: failed to connect to LDAP server']);
    } finally {
      garbage.close();
    }
  });

  test('filter and DN injection: special characters in the username match nobody', async () => {
    await h.call('write', 'config', { binddn: SEARCH_BIND_DN, bindpass: SEARCH_BIND_PASSWORD });
    await h.refuses('write', 'login/*', { password: USERS.alice.password }, 400, ['ldap operation failed: unable to retrieve user bind DN']);
    await h.refuses('write', 'login/alice)(uid=*', { password: USERS.alice.password }, 400, ['ldap operation failed: unable to retrieve user bind DN']);
    await h.call('write', 'config', { binddn: '', bindpass: '' });
    await h.refuses('write', 'login/alice,ou=people', { password: USERS.alice.password }, 400, ['ldap operation failed: failed to bind as user']);
    await h.call('write', 'config', { binddn: SEARCH_BIND_DN, bindpass: SEARCH_BIND_PASSWORD });
  });

  test('lock-out after repeated wrong passwords', async () => {
    const t = await harness(ldapRegistration);
    await t.call('write', 'config', { url: slapd.url, userdn: PEOPLE_DN, userattr: 'uid' });
    for (let i = 0; i < 5; i++) await t.refuses('write', 'login/bob', { password: 'nope' }, 400, ['ldap operation failed: failed to bind as user']);
    await t.refuses('write', 'login/bob', { password: USERS.bob.password }, 403, ['permission denied']);
  });

  test('renew re-binds; refused when the mapped policies changed', async () => {
    const auth = (await h.call('write', 'login/alice', { password: USERS.alice.password }))!.auth!;
    assert.deepEqual((await h.renew(auth, 'login/alice')).policies, auth.policies);
    await h.call('write', 'groups/ops', { policies: 'ops,more' });
    await assert.rejects(h.renew(auth, 'login/alice'), { message: 'policies have changed, not renewing' });
    await h.call('write', 'groups/ops', { policies: 'ops' });
  });
});

test('filter templates, DN escaping and group names from DNs', () => {
  assert.equal(renderFilter('({{.UserAttr}}={{.Username}})', { UserAttr: 'uid', Username: 'a\\2a' }), '(uid=a\\2a)');
  assert.equal(renderFilter('(member={{ .UserDN }})', { UserDN: 'uid=a,dc=x' }), '(member=uid=a,dc=x)');
  assert.equal(escapeDnValue('Smith, John'), 'Smith\\, John');
  assert.equal(escapeDnValue(' #x '), '\\ #x\\ ');
  assert.equal(commonName('cn=admins,ou=groups,dc=example,dc=org'), 'admins');
  assert.equal(commonName('CN=Domain Admins,CN=Users,DC=corp'), 'Domain Admins');
  assert.equal(commonName('engineers'), 'engineers');
});

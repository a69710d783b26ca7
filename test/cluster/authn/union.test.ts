import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  authenticatedGroupAdder,
  bearerToken,
  parseBasicAuthorization,
  unionAuthenticator,
  withAnonymous,
} from '../../../src/cluster/authn/index.js';
import { AuthenticationError, type Authenticator, type UserInfo } from '../../../src/cluster/authn/types.js';

test('bearer token extraction: one row per case', () => {
  const rows: Array<[string | undefined, string | null]> = [
    [undefined, null],
    ['', null],
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['BEARER abc', 'abc'],
    ['  Bearer abc  ', 'abc'],
    ['Bearer abc def', 'abc'],
    ['Bearer', null],
    ['Bearer ', null],
    ['Bearer  abc', null],
    ['Basic abc', null],
    ['Token abc', null],
  ];
  for (const [header, token] of rows) assert.equal(bearerToken(header), token, JSON.stringify(header));
});

test('basic credentials: one row per case', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const rows: Array<[string | undefined, object | null]> = [
    [undefined, null],
    [`Basic ${b64('jane:pw')}`, { username: 'jane', password: 'pw' }],
    [`basic ${b64('jane:pw')}`, { username: 'jane', password: 'pw' }],
    [`Basic ${b64('jane:pw:with:colons')}`, { username: 'jane', password: 'pw:with:colons' }],
    [`Basic ${b64(':pw')}`, { username: '', password: 'pw' }],
    [`Basic ${b64('no-colon')}`, null],
    ['Basic !!!', null],
    [`Bearer ${b64('jane:pw')}`, null],
  ];
  for (const [header, want] of rows) assert.deepEqual(parseBasicAuthorization(header), want, JSON.stringify(header));
});

const fixed = (user: UserInfo | null, error?: string): Authenticator => ({
  async authenticate() {
    if (error) throw new AuthenticationError(error);
    return user ? { user } : null;
  },
});

test('union: first success wins; errors are gathered only when nobody succeeds', async () => {
  const jane = { name: 'jane', groups: [] };
  const request = { headers: {} };
  assert.equal((await unionAuthenticator([fixed(null, 'bad cert'), fixed(jane)]).authenticate(request))?.user.name, 'jane');
  assert.equal(await unionAuthenticator([fixed(null), fixed(null)]).authenticate(request), null);
  await assert.rejects(unionAuthenticator([fixed(null, 'bad cert'), fixed(null), fixed(null, 'invalid bearer token')]).authenticate(request), (e: unknown) => e instanceof AuthenticationError && e.message === '[bad cert, invalid bearer token]');
  await assert.rejects(unionAuthenticator([fixed(null, 'same'), fixed(null, 'same')]).authenticate(request), (e: unknown) => e instanceof AuthenticationError && e.message === 'same');
  // The anonymous fallback applies to "no credential", never to a failed one.
  await assert.rejects(withAnonymous(unionAuthenticator([fixed(null, 'bad')])).authenticate(request), AuthenticationError);
  assert.deepEqual((await withAnonymous(unionAuthenticator([fixed(null)])).authenticate(request))?.user, { name: 'system:anonymous', groups: ['system:unauthenticated'] });
});

test('system:authenticated is added last, except for anonymous and users already in an all-users group', async () => {
  const rows: Array<[UserInfo, readonly string[]]> = [
    [{ name: 'jane', groups: ['devs'] }, ['devs', 'system:authenticated']],
    [{ name: 'jane', groups: [] }, ['system:authenticated']],
    [{ name: 'jane', groups: ['system:authenticated', 'devs'] }, ['system:authenticated', 'devs']],
    [{ name: 'odd', groups: ['system:unauthenticated'] }, ['system:unauthenticated']],
    [{ name: 'system:anonymous', groups: ['x'] }, ['x']],
  ];
  for (const [user, groups] of rows) {
    assert.deepEqual((await authenticatedGroupAdder(fixed(user)).authenticate({ headers: {} }))?.user.groups, groups, user.name);
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StartupError } from '../../../src/common/errors.js';
import { buildAuthenticator } from '../../../src/cluster/authn/index.js';
import { AuthenticationError } from '../../../src/cluster/authn/types.js';

const dir = mkdtempSync(path.join(tmpdir(), 'authn-files-'));
function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

const tokens = file(
  'tokens.csv',
  [
    'tok-jane,jane,u1,"devs,qa"',
    'tok-bob,bob,u2',
    '',
    ',nobody,u0',
    'tok-dup,first,u3,a',
    'tok-dup,second,u4,"b,c"',
    '"tok,comma",comma,u5,',
  ].join('\r\n') + '\r\n',
);
const passwords = file('basic.csv', ['s3cret,alice,100,"admins,devs"', 'pw,carol,101', 'old,dave,102', 'new,dave,103,x'].join('\n'));

test('static tokens and basic auth: who each credential is', async () => {
  const warnings: string[] = [];
  const authenticator = await buildAuthenticator({ tokenAuthFile: tokens, basicAuthFile: passwords, anonymous: true, warn: (m) => warnings.push(m) });
  const rows: Array<[string, string | undefined, object]> = [
    ['token with quoted groups', 'Bearer tok-jane', { name: 'jane', uid: 'u1', groups: ['devs', 'qa', 'system:authenticated'] }],
    ['token without groups', 'Bearer tok-bob', { name: 'bob', uid: 'u2', groups: ['system:authenticated'] }],
    ['scheme is case-insensitive', 'bEaReR tok-bob', { name: 'bob', uid: 'u2', groups: ['system:authenticated'] }],
    ['later duplicate token wins', 'Bearer tok-dup', { name: 'second', uid: 'u4', groups: ['b', 'c', 'system:authenticated'] }],
    ['quoted token with a comma; empty group column', 'Bearer tok,comma', { name: 'comma', uid: 'u5', groups: ['', 'system:authenticated'] }],
    ['basic auth with groups', basic('alice', 's3cret'), { name: 'alice', uid: '100', groups: ['admins', 'devs', 'system:authenticated'] }],
    ['later duplicate user wins', basic('dave', 'new'), { name: 'dave', uid: '103', groups: ['x', 'system:authenticated'] }],
    ['no credential is anonymous', undefined, { name: 'system:anonymous', groups: ['system:unauthenticated'] }],
    ['another scheme is not a credential', 'Negotiate abc', { name: 'system:anonymous', groups: ['system:unauthenticated'] }],
    ['an empty bearer token is not a credential', 'Bearer ', { name: 'system:anonymous', groups: ['system:unauthenticated'] }],
  ];
  for (const [name, authorization, want] of rows) {
    const result = await authenticator.authenticate({ headers: authorization === undefined ? {} : { authorization } });
    assert.deepEqual(result?.user, want, name);
  }
  assert.deepEqual(warnings, [
    `empty token has been found in token file '${tokens}', record number '3' (line 4)`,
    `duplicate token has been found in token file '${tokens}', record number '5' (line 6)`,
    `duplicate user has been found in basic auth file '${passwords}' (line 4)`,
  ]);
});

test('a presented but wrong credential is 401, never anonymous', async () => {
  const authenticator = await buildAuthenticator({ tokenAuthFile: tokens, basicAuthFile: passwords, anonymous: true });
  const rows: Array<[string, string]> = [
    ['Bearer nope', 'invalid bearer token'],
    ['Bearer tok-empty-row', 'invalid bearer token'],
    [basic('alice', 'wrong'), 'invalid username/password combination'],
    [basic('mallory', 's3cret'), 'invalid username/password combination'],
    [basic('dave', 'old'), 'invalid username/password combination'],
  ];
  for (const [authorization, message] of rows) {
    await assert.rejects(authenticator.authenticate({ headers: { authorization } }), (e: unknown) => e instanceof AuthenticationError && e.message === message, authorization);
  }
});

test('without anonymous access, no credential is null', async () => {
  const authenticator = await buildAuthenticator({ tokenAuthFile: tokens, anonymous: false });
  assert.equal(await authenticator.authenticate({ headers: {} }), null);
});

test('file problems are start-up errors naming the file and line', async () => {
  const rows: Array<[string, string, string]> = [
    ['tokenAuthFile', file('short.csv', 'a,b,c\nonly,two\n'), `token file '${path.join(dir, 'short.csv')}' must have at least 3 columns (token, user name, user uid), found 2 (line 2)`],
    ['basicAuthFile', file('short-basic.csv', 'pw,user\n'), `basic auth file '${path.join(dir, 'short-basic.csv')}' must have at least 3 columns (password, user name, user uid), found 2 (line 1)`],
    ['tokenAuthFile', path.join(dir, 'absent.csv'), `--token-auth-file: cannot read ${path.join(dir, 'absent.csv')} (ENOENT)`],
  ];
  for (const [key, p, message] of rows) {
    await assert.rejects(buildAuthenticator({ [key]: p, anonymous: true }), (e: unknown) => e instanceof StartupError && e.message === message, message);
  }
  const badQuote = file('quote.csv', 'a,b,c\nt,"unterminated,u\n');
  await assert.rejects(buildAuthenticator({ tokenAuthFile: badQuote, anonymous: true }), (e: unknown) => e instanceof StartupError && e.message.startsWith(`--token-auth-file: ${badQuote}`));
});

test('further token authenticators (the OIDC slot) join the bearer union after the file', async () => {
  const authenticator = await buildAuthenticator({
    tokenAuthFile: tokens,
    anonymous: true,
    tokenAuthenticators: [
      {
        async authenticateToken(token) {
          if (!token.startsWith('oidc.')) return null;
          if (token === 'oidc.expired') throw new AuthenticationError('oidc: token is expired');
          return { user: { name: `https://issuer.example#${token.slice(5)}`, groups: ['oidc:devs'] } };
        },
      },
    ],
  });
  assert.deepEqual((await authenticator.authenticate({ headers: { authorization: 'Bearer oidc.jane' } }))?.user, { name: 'https://issuer.example#jane', groups: ['oidc:devs', 'system:authenticated'] });
  assert.equal((await authenticator.authenticate({ headers: { authorization: 'Bearer tok-bob' } }))?.user.name, 'bob');
  await assert.rejects(authenticator.authenticate({ headers: { authorization: 'Bearer oidc.expired' } }), (e: unknown) => e instanceof AuthenticationError && e.message === 'oidc: token is expired');
  await assert.rejects(authenticator.authenticate({ headers: { authorization: 'Bearer other' } }), (e: unknown) => e instanceof AuthenticationError && e.message === 'invalid bearer token');
});

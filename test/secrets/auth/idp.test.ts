// The idp (Okta-compatible) method driven directly, against the HTTPS IdP double.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { harness, type Harness } from './backend-harness.js';
import { IdpDouble } from './idp-double.js';
import { idpBackend, idpRegistration } from '../../../src/secrets/auth/idp/backend.js';
import type { BackendRegistration } from '../../../src/secrets/registry.js';

const API_TOKEN = 'ssws-test-token';
const fastPush: BackendRegistration = { ...idpRegistration, factory: () => idpBackend({ pushPollIntervalMs: 20 }) };

describe('idp method against the IdP double', () => {
  let idp: IdpDouble;
  let h: Harness;
  const configure = (extra: Record<string, unknown> = {}) =>
    h.call('write', 'config', { org_name: 'acme', base_url: idp.url, certificate: idp.caCert, api_token: API_TOKEN, request_timeout: '2s', ...extra });

  before(async () => {
    idp = await IdpDouble.start({
      apiToken: API_TOKEN,
      users: [
        { login: 'alice', password: 'pw-a', groups: ['Engineering', 'Everyone'] },
        { login: 'bob', password: 'pw-b', groups: ['Everyone'] },
        { login: 'warned', password: 'pw-w', status: 'PASSWORD_WARN', groups: ['Engineering'] },
        { login: 'locked', password: 'pw-l', status: 'LOCKED_OUT' },
        { login: 'totp', password: 'pw-t', groups: ['Engineering'], factors: { totp: { passCode: '123456' } } },
        { login: 'pusher', password: 'pw-p', groups: ['Engineering'], factors: { push: { outcome: 'SUCCESS', waitPolls: 3, numberChallenge: 42 } } },
      ],
    });
    h = await harness(fastPush, 'idp', 'idp');
  });
  after(() => idp.close());

  test('not configured: 400 Okta auth method not configured; org_name is required', async () => {
    await h.refuses('write', 'login/alice', { password: 'pw-a' }, 400, ['Okta auth method not configured']);
    await h.refuses('write', 'config', { base_url: idp.url }, 400, ['org_name is missing']);
    await h.refuses('read', 'config', {}, 404, []);
  });

  test('config: written with warnings when there is no API token; read never returns the API token', async () => {
    assert.deepEqual(await h.call('write', 'config', { org_name: 'acme', base_url: idp.url }), {
      warnings: [
        'No Okta API token is configured. Okta group membership will not be queried during login, so only policies from locally-defined users and groups will apply.',
      ],
    });
    assert.equal(await configure({ token_policies: 'base' }), undefined, '204 with an API token');
    const data = (await h.call('read', 'config'))!.data!;
    assert.equal(data.api_token, undefined);
    assert.equal(JSON.stringify(data).includes(API_TOKEN), false);
    assert.deepEqual(
      [data.org_name, data.organization, data.base_url, data.bypass_okta_mfa, data.token_policies, data.request_timeout],
      ['acme', 'acme', idp.url, false, ['base'], 2],
    );
    await h.refuses('write', 'config', { base_url: 'http://127.0.0.1:1' }, 400, [
      'base_url "http://127.0.0.1:1" must be a domain (okta.com) or an https:// URL without a path',
    ]);
    await h.refuses('write', 'config', { certificate: 'not a pem' }, 400, ['certificate must be PEM-encoded CA certificates']);
  });

  test('users and groups mappings: CRUD and LIST', async () => {
    await h.call('write', 'groups/Engineering', { policies: 'dev, ops' });
    await h.call('write', 'groups/Everyone', { policies: ['web'] });
    await h.call('write', 'users/alice', { policies: 'alice-own', groups: 'local-admins' });
    await h.call('write', 'groups/local-admins', { policies: 'admin' });
    assert.deepEqual((await h.call('read', 'groups/Engineering'))!.data, { policies: ['dev', 'ops'] });
    assert.deepEqual((await h.call('read', 'users/alice'))!.data, { groups: ['local-admins'], policies: ['alice-own'] });
    assert.deepEqual((await h.call('list', 'groups/'))!.data, { keys: ['Engineering', 'Everyone', 'local-admins'] });
    assert.deepEqual((await h.call('list', 'users/'))!.data, { keys: ['alice'] });
    await h.call('write', 'users/temp', { policies: 'x' });
    await h.call('delete', 'users/temp');
    await h.refuses('read', 'users/temp', {}, 404, []);
  });

  test('login: policies = config token policies ∪ mapped IdP groups ∪ local groups ∪ user policies', async () => {
    await configure({ token_policies: 'base', token_ttl: '1h' });
    const response = await h.call('write', 'login/alice', { password: 'pw-a' });
    assert.deepEqual(response, {
      auth: {
        policies: ['base', 'dev', 'ops', 'web', 'admin', 'alice-own'],
        ttl: 3600,
        maxTtl: 0,
        explicitMaxTtl: 0,
        period: 0,
        numUses: 0,
        noDefaultPolicy: false,
        boundCidrs: [],
        tokenType: 'default',
        displayName: 'alice',
        metadata: { username: 'alice', policies: 'dev,ops,web,admin,alice-own' },
        internalData: { password: 'pw-a' },
        alias: { name: 'alice' },
        groupAliases: ['Engineering', 'Everyone', 'local-admins'],
      },
    });
  });

  test('login without an API token: only local mappings count, and groups are not queried', async () => {
    await h.call('write', 'config', { api_token: '' });
    idp.requests.length = 0;
    const auth = (await h.call('write', 'login/alice', { password: 'pw-a' }))!.auth!;
    assert.deepEqual(auth.policies, ['base', 'admin', 'alice-own']);
    assert.deepEqual(idp.requests.map((r) => r.path), ['/api/v1/authn']);
    await configure();
  });

  test('statuses: wrong password, LOCKED_OUT → 400; PASSWORD_WARN → token with warning', async () => {
    await h.refuses('write', 'login/alice', { password: 'nope' }, 400, ['okta authentication failed']);
    await h.refuses('write', 'login/locked', { password: 'pw-l' }, 400, ['okta authentication failed']);
    const warned = await h.call('write', 'login/warned', { password: 'pw-w' });
    assert.deepEqual(warned?.warnings, ['Your Okta password is in warning state and needs to be changed soon.']);
    assert.ok(warned?.auth);
  });

  test('MFA: TOTP required and checked; bypass_okta_mfa skips it; bad provider is refused', async () => {
    await h.refuses('write', 'login/totp', { password: 'pw-t' }, 400, ["'totp' passcode parameter is required to perform MFA"]);
    await h.refuses('write', 'login/totp', { password: 'pw-t', totp: '999999' }, 400, ['okta authentication failed']);
    assert.ok((await h.call('write', 'login/totp', { password: 'pw-t', totp: '123456' }))?.auth);
    await h.refuses('write', 'login/totp', { password: 'pw-t', provider: 'duo' }, 400, ['provider DUO is not among the supported ones [GOOGLE OKTA]']);
    const warnings = (await configure({ bypass_okta_mfa: true }))?.warnings;
    assert.match(String(warnings), /Okta MFA bypass is configured/);
    assert.ok((await h.call('write', 'login/totp', { password: 'pw-t' }))?.auth);
    await configure({ bypass_okta_mfa: false });
  });

  test('MFA push with number challenge: needs a nonce; verify/<nonce> shows the number while pending', async () => {
    await h.refuses('write', 'login/pusher', { password: 'pw-p' }, 400, ['nonce must be provided during login request when presented with number challenge']);
    const pending = h.call('write', 'login/pusher', { password: 'pw-p', nonce: 'n-1' });
    let shown: unknown;
    for (let i = 0; i < 50 && shown === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      shown = await h.call('read', 'verify/n-1').then((r) => r?.data, () => undefined);
    }
    assert.deepEqual(shown, { correct_answer: 42 });
    assert.ok((await pending)?.auth);
    await h.refuses('read', 'verify/n-1', {}, 404, []);
  });

  test('renew re-runs the IdP login; refused when the mapped policies changed or the password no longer works', async () => {
    const auth = (await h.call('write', 'login/bob', { password: 'pw-b' }))!.auth!;
    assert.deepEqual(auth.policies, ['base', 'web']);
    assert.deepEqual((await h.renew(auth, 'login/bob')).policies, auth.policies);
    await h.call('write', 'groups/Everyone', { policies: 'web,extra' });
    await assert.rejects(h.renew(auth, 'login/bob'), { message: 'policies have changed, not renewing' });
    await h.call('write', 'groups/Everyone', { policies: 'web' });
    idp.setUser({ login: 'bob', password: 'changed', groups: ['Everyone'] });
    await assert.rejects(h.renew(auth, 'login/bob'), { message: 'okta authentication failed' });
  });

  test('a misbehaving IdP gives 400s within request_timeout, never a token', async () => {
    try {
      idp.fault = 'html';
      await h.refuses('write', 'login/alice', { password: 'pw-a' }, 400, ['Okta auth failed: the IdP answered HTTP 200 with a body that is not JSON (text/html)']);
      idp.fault = 'hang';
      await configure({ request_timeout: 1 });
      await h.refuses('write', 'login/alice', { password: 'pw-a' }, 400, [`Okta auth failed: no answer from ${new URL(idp.url).host} within 1s`]);
    } finally {
      idp.fault = undefined;
    }
    await configure({ certificate: '' });
    await assert.rejects(h.call('write', 'login/alice', { password: 'pw-a' }), { statusCode: 400, message: /^Okta auth failed: TLS error: / });
    await configure();
  });
});

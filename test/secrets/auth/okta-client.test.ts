// The idp method's conversation with an Okta-compatible IdP, against the HTTPS test double.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { IdpDouble } from './idp-double.js';
import { IdpLoginError, OktaClient, orgUrl, type OktaClientOptions } from '../../../src/secrets/auth/idp/okta-client.js';

const API_TOKEN = 'okta-api-token';

describe('OktaClient against the IdP double', () => {
  let idp: IdpDouble;
  const client = (extra: Partial<OktaClientOptions> = {}) =>
    new OktaClient({ orgUrl: idp.url, caCertificates: idp.caCert, apiToken: API_TOKEN, timeoutMs: 2000, pushPollIntervalMs: 10, ...extra });
  const refused = async (promise: Promise<unknown>, message: string | RegExp) => {
    await assert.rejects(promise, (error: unknown) => {
      assert.ok(error instanceof IdpLoginError, `expected IdpLoginError, got ${String(error)}`);
      if (typeof message === 'string') assert.equal(error.message, message);
      else assert.match(error.message, message);
      return true;
    });
  };

  before(async () => {
    idp = await IdpDouble.start({
      apiToken: API_TOKEN,
      groupsPageSize: 2,
      users: [
        { login: 'alice', password: 'pw-a', groups: ['Engineering', 'Everyone', 'Ops'] },
        { login: 'warned', password: 'pw-w', status: 'PASSWORD_WARN', groups: [] },
        { login: 'locked', password: 'pw-l', status: 'LOCKED_OUT' },
        { login: 'expired', password: 'pw-e', status: 'PASSWORD_EXPIRED' },
        { login: 'enrol', password: 'pw-n', status: 'MFA_ENROLL', groups: ['Everyone'] },
        { login: 'totp', password: 'pw-t', groups: ['Everyone'], factors: { totp: { passCode: '123456' } } },
        { login: 'gtotp', password: 'pw-g', groups: ['Everyone'], factors: { totp: { passCode: '654321', provider: 'GOOGLE' } } },
        { login: 'pusher', password: 'pw-p', groups: ['Everyone'], factors: { push: { outcome: 'SUCCESS', waitPolls: 2 } } },
        { login: 'rejecter', password: 'pw-r', factors: { push: { outcome: 'REJECTED' } } },
        { login: 'sleeper', password: 'pw-s', factors: { push: { outcome: 'TIMEOUT' } } },
      ],
    });
  });
  after(() => idp.close());

  test('SUCCESS: groups come from every page of the groups API, with the API token', async () => {
    idp.requests.length = 0;
    const result = await client().login({ username: 'alice', password: 'pw-a', bypassMfa: false });
    assert.deepEqual(result, { groups: ['Engineering', 'Everyone', 'Ops'], warnings: [] });
    const groupCalls = idp.requests.filter((r) => r.path.includes('/groups'));
    assert.equal(groupCalls.length, 2, 'two pages of two');
    assert.ok(groupCalls.every((r) => r.authorization === `SSWS ${API_TOKEN}`));
    assert.deepEqual(idp.requests[0], {
      method: 'POST',
      path: '/api/v1/authn',
      authorization: `SSWS ${API_TOKEN}`,
      body: { username: 'alice', password: '***' },
    });
  });

  test('without an API token: no Authorization header and no groups call', async () => {
    idp.requests.length = 0;
    const result = await client({ apiToken: undefined }).login({ username: 'alice', password: 'pw-a', bypassMfa: false });
    assert.deepEqual(result, { warnings: [] });
    assert.deepEqual(idp.requests.map((r) => [r.path, r.authorization]), [['/api/v1/authn', undefined]]);
  });

  test('a wrong API token fails the groups call with the IdP summary', async () => {
    await refused(
      client({ apiToken: 'nope' }).login({ username: 'alice', password: 'pw-a', bypassMfa: false }),
      'okta failure retrieving groups: HTTP 401: Invalid token provided (E0000011)',
    );
  });

  test('PASSWORD_WARN logs in with a warning; zero groups adds the no-groups warning', async () => {
    const result = await client().login({ username: 'warned', password: 'pw-w', bypassMfa: false });
    assert.deepEqual(result, {
      groups: [],
      warnings: [
        'Your Okta password is in warning state and needs to be changed soon.',
        'no Okta groups found; only policies from locally-defined groups available',
      ],
    });
  });

  test('wrong password, unknown user, LOCKED_OUT and PASSWORD_EXPIRED: okta authentication failed', async () => {
    for (const [username, password] of [['alice', 'wrong'], ['nobody', 'x'], ['locked', 'pw-l'], ['expired', 'pw-e']] as const) {
      await refused(client().login({ username, password, bypassMfa: false }), 'okta authentication failed');
    }
  });

  test('MFA_ENROLL needs enrolment unless MFA is bypassed', async () => {
    await refused(
      client().login({ username: 'enrol', password: 'pw-n', bypassMfa: false }),
      'okta authentication failed: you must complete MFA enrollment to continue',
    );
    assert.deepEqual(await client().login({ username: 'enrol', password: 'pw-n', bypassMfa: true }), { groups: ['Everyone'], warnings: [] });
  });

  test('MFA_REQUIRED with TOTP: the passcode is required, checked, and bypass skips it', async () => {
    await refused(client().login({ username: 'totp', password: 'pw-t', bypassMfa: false }), "'totp' passcode parameter is required to perform MFA");
    await refused(client().login({ username: 'totp', password: 'pw-t', totp: '000000', bypassMfa: false }), 'okta authentication failed');
    idp.requests.length = 0;
    assert.deepEqual(await client().login({ username: 'totp', password: 'pw-t', totp: '123456', bypassMfa: false }), {
      groups: ['Everyone'],
      warnings: [],
    });
    assert.deepEqual(idp.requests[1]?.body, { stateToken: (idp.requests[1]?.body as { stateToken: string }).stateToken, passCode: '***' });
    assert.deepEqual(await client().login({ username: 'totp', password: 'pw-t', bypassMfa: true }), { groups: ['Everyone'], warnings: [] });
  });

  test('provider narrows the factors: a GOOGLE TOTP user asked for OKTA has no usable factor', async () => {
    assert.deepEqual(await client().login({ username: 'gtotp', password: 'pw-g', totp: '654321', provider: 'GOOGLE', bypassMfa: false }), {
      groups: ['Everyone'],
      warnings: [],
    });
    await refused(
      client().login({ username: 'gtotp', password: 'pw-g', totp: '654321', provider: 'OKTA', bypassMfa: false }),
      'Okta Verify Push or TOTP or Google TOTP factor is required in order to perform MFA',
    );
  });

  test('push: polled while WAITING, then SUCCESS / REJECTED / TIMEOUT', async () => {
    idp.requests.length = 0;
    assert.deepEqual(await client().login({ username: 'pusher', password: 'pw-p', bypassMfa: false }), { groups: ['Everyone'], warnings: [] });
    assert.equal(idp.requests.filter((r) => r.path.endsWith('/verify')).length, 3, 'two WAITING answers, then SUCCESS');
    await refused(client().login({ username: 'rejecter', password: 'pw-r', bypassMfa: false }), 'multi-factor authentication denied');
    await refused(client().login({ username: 'sleeper', password: 'pw-s', bypassMfa: false }), 'failed to complete multi-factor authentication');
  });

  test('a misbehaving IdP: HTML, broken JSON, a 500 page, a hang — each a clear 400 message, never a hang', async () => {
    try {
      idp.fault = 'html';
      await refused(
        client().login({ username: 'alice', password: 'pw-a', bypassMfa: false }),
        'Okta auth failed: the IdP answered HTTP 200 with a body that is not JSON (text/html)',
      );
      idp.fault = 'not-json';
      await refused(
        client().login({ username: 'alice', password: 'pw-a', bypassMfa: false }),
        'Okta auth failed: the IdP answered HTTP 200 with a body that is not JSON (application/json)',
      );
      idp.fault = 'error-500';
      await refused(
        client().login({ username: 'alice', password: 'pw-a', bypassMfa: false }),
        'Okta auth failed: the IdP answered HTTP 500 with a body that is not JSON (text/html)',
      );
      idp.fault = 'hang';
      await refused(
        client({ timeoutMs: 300 }).login({ username: 'alice', password: 'pw-a', bypassMfa: false }),
        `Okta auth failed: no answer from ${new URL(idp.url).host} within 300ms`,
      );
    } finally {
      idp.fault = undefined;
    }
  });

  test('TLS: a server certificate from an untrusted CA is refused', async () => {
    await refused(
      client({ caCertificates: undefined }).login({ username: 'alice', password: 'pw-a', bypassMfa: false }),
      /^Okta auth failed: TLS error: /,
    );
  });

  test('nobody listening: connection refused', async () => {
    const closed = await IdpDouble.start();
    const url = closed.url;
    await closed.close();
    await refused(client({ orgUrl: url }).login({ username: 'alice', password: 'pw-a', bypassMfa: false }), 'Okta auth failed: connection refused');
  });
});

test('orgUrl: org name + domain as Vault builds it, or a full https URL as given', () => {
  assert.equal(orgUrl('acme', 'okta.com'), 'https://acme.okta.com');
  assert.equal(orgUrl('acme', 'oktapreview.com'), 'https://acme.oktapreview.com');
  assert.equal(orgUrl('acme', 'https://127.0.0.1:8443/'), 'https://127.0.0.1:8443');
});

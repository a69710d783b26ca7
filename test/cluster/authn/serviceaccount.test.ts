import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildAuthenticator, ServiceAccountTokenIssuer } from '../../../src/cluster/authn/index.js';
import { AuthenticationError, type Authenticator } from '../../../src/cluster/authn/types.js';
import { decodeJwt, decodeProtectedHeader } from 'jose';

const sa = { namespace: 'ci', name: 'builder', uid: 'sa-uid-1' };

async function setup(active = new Set(['ci/builder/sa-uid-1']), pods = new Set<string>()) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'authn-sa-'));
  const issuer = await ServiceAccountTokenIssuer.open(dataDir);
  const authenticator = await buildAuthenticator({
    anonymous: true,
    serviceAccounts: {
      issuer: issuer.issuer,
      verificationKeys: [issuer.publicKey],
      isActive: async (namespace, name, uid) => active.has(`${namespace}/${name}/${uid}`),
      isBoundObjectActive: async (namespace, ref) => pods.has(`${namespace}/${ref.name}/${ref.uid}`),
    },
  });
  return { dataDir, issuer, authenticator };
}

const bearer = (authenticator: Authenticator, token: string, audiences?: string[]) =>
  authenticator.authenticate({ headers: { authorization: `Bearer ${token}` }, ...(audiences ? { audiences } : {}) });

test('issued tokens carry the bound claims and authenticate as the service account', async () => {
  const { dataDir, issuer, authenticator } = await setup();
  const { token, expirationTimestamp } = await issuer.issue(sa, { audiences: [], expirationSeconds: 3600 });
  const claims = decodeJwt(token);
  assert.equal(decodeProtectedHeader(token).alg, 'ES256');
  assert.equal(claims.iss, 'https://kubernetes.default.svc.cluster.local');
  assert.equal(claims.sub, 'system:serviceaccount:ci:builder');
  assert.deepEqual(claims.aud, ['https://kubernetes.default.svc.cluster.local']);
  assert.deepEqual(claims['kubernetes.io'], { namespace: 'ci', serviceaccount: { name: 'builder', uid: 'sa-uid-1' } });
  assert.equal(claims.exp! - claims.iat!, 3600);
  assert.equal(expirationTimestamp, new Date(claims.exp! * 1000).toISOString().replace('.000Z', 'Z'));
  const result = await bearer(authenticator, token);
  assert.deepEqual(result?.user, {
    name: 'system:serviceaccount:ci:builder',
    uid: 'sa-uid-1',
    groups: ['system:serviceaccounts', 'system:serviceaccounts:ci', 'system:authenticated'],
    extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`] },
  });
  assert.equal(statSync(path.join(dataDir, 'service-account.key')).mode & 0o777, 0o600);
  // Reopening the data directory keeps the key: earlier tokens still verify.
  const again = await ServiceAccountTokenIssuer.open(dataDir);
  assert.equal(again.publicKey.kid, issuer.publicKey.kid);
  assert.match(readFileSync(path.join(dataDir, 'service-account.key'), 'utf8'), /BEGIN PRIVATE KEY/);
});

test('rejected service-account tokens: one row per case', async () => {
  const active = new Set(['ci/builder/sa-uid-1']);
  const pods = new Set(['ci/web/pod-uid-1']);
  const { issuer, authenticator } = await setup(active, pods);
  const other = await setup();
  const valid = (await issuer.issue(sa, { audiences: [], expirationSeconds: 3600 })).token;
  const expired = (await issuer.issue(sa, { audiences: [], expirationSeconds: -60 })).token;
  const forVault = (await issuer.issue(sa, { audiences: ['vault'], expirationSeconds: 3600 })).token;
  const foreign = (await other.issuer.issue(sa, { audiences: [], expirationSeconds: 3600 })).token;
  const podBound = (await issuer.issue(sa, { audiences: [], expirationSeconds: 3600, boundObject: { kind: 'Pod', name: 'web', uid: 'pod-uid-1' } })).token;
  const [head, body] = valid.split('.');
  const tampered = `${head}.${body}.${Buffer.from('not the signature').toString('base64url')}`;

  assert.deepEqual((await bearer(authenticator, podBound))?.user.extra, {
    'authentication.kubernetes.io/pod-name': ['web'],
    'authentication.kubernetes.io/pod-uid': ['pod-uid-1'],
    'authentication.kubernetes.io/credential-id': [`JTI=${decodeJwt(podBound).jti}`],
  });
  assert.deepEqual((await bearer(authenticator, forVault, ['vault']))?.audiences, ['vault']);

  const rows: Array<[string, string, string[] | undefined, string]> = [
    ['expired', expired, undefined, 'service account token has expired'],
    ['another audience', forVault, undefined, 'token audiences ["vault"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]'],
    ['signed by another key with the same issuer', foreign, undefined, 'service account token signature could not be verified'],
    ['tampered signature', tampered, undefined, 'service account token signature could not be verified'],
    ['not a JWT at all', 'plain-token', undefined, 'invalid bearer token'],
  ];
  for (const [name, token, audiences, message] of rows) {
    await assert.rejects(bearer(authenticator, token, audiences), (e: unknown) => e instanceof AuthenticationError && e.message === message, name);
  }

  pods.clear();
  await assert.rejects(bearer(authenticator, podBound), (e: unknown) => e instanceof AuthenticationError && e.message === 'the pod ci/web this token is bound to no longer exists');
  active.clear();
  await assert.rejects(bearer(authenticator, valid), (e: unknown) => e instanceof AuthenticationError && e.message === 'service account ci/builder (uid sa-uid-1) no longer exists');
});

test('RS256 keys from PEM work too', async () => {
  const { generateKeyPairSync } = await import('node:crypto');
  const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const issuer = ServiceAccountTokenIssuer.fromPem(pem, { issuer: 'https://issuer.example' });
  const authenticator = await buildAuthenticator({ anonymous: false, serviceAccounts: { issuer: issuer.issuer, verificationKeys: [issuer.publicKey], isActive: async () => true } });
  const { token } = await issuer.issue(sa, { audiences: [], expirationSeconds: 600 });
  assert.equal(decodeProtectedHeader(token).alg, 'RS256');
  assert.equal((await bearer(authenticator, token))?.user.name, 'system:serviceaccount:ci:builder');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { CertificateAuthority } from '../../../src/common/tls.js';
import { X509Authenticator, buildAuthenticator } from '../../../src/cluster/authn/index.js';
import { AuthenticationError, type AuthenticationRequest } from '../../../src/cluster/authn/types.js';

/**
 * A real TLS handshake: the server trusts `trusted` for client certificates (requestCert, not
 * rejecting), and hands what Node saw to the authenticator — exactly what the API server does.
 */
async function handshake(serverTrusts: string | string[], client?: { cert: string; key: string }): Promise<AuthenticationRequest['tls']> {
  const serverCa = await CertificateAuthority.create('server-ca');
  const serving = await serverCa.issueServer({ commonName: 'localhost', hosts: ['127.0.0.1'] });
  const server = tls.createServer({ ...serving, ca: serverTrusts, requestCert: true, rejectUnauthorized: false });
  const seen = once(server, 'secureConnection') as Promise<[tls.TLSSocket]>;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const socket = tls.connect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', ca: serverCa.cert, ...(client ?? {}) });
  const [peer] = await seen;
  const result = { authorized: peer.authorized, ...(peer.authorizationError ? { authorizationError: String(peer.authorizationError) } : {}), peerCertificate: peer.getPeerCertificate(true) };
  socket.destroy();
  server.close();
  return result;
}

test('x509: CN is the user, every O a group (G9), only when verified against the client CA', async () => {
  const clientCa = await CertificateAuthority.create('client-ca');
  const foreignCa = await CertificateAuthority.create('foreign-ca');
  const authenticator = await buildAuthenticator({ clientCa: clientCa.cert, anonymous: true });

  const two = await clientCa.issueClient({ commonName: 'jbeda', organizations: ['app1', 'app2'] });
  const result = await authenticator.authenticate({ headers: {}, tls: await handshake(clientCa.cert, two) });
  assert.equal(result?.user.name, 'jbeda');
  assert.deepEqual(result?.user.groups, ['app1', 'app2', 'system:authenticated']);
  assert.match(result?.user.extra?.['authentication.kubernetes.io/credential-id']?.[0] ?? '', /^X509SHA256=[0-9a-f]{64}$/);

  const one = await clientCa.issueClient({ commonName: 'admin', organizations: ['system:masters'] });
  assert.deepEqual((await authenticator.authenticate({ headers: {}, tls: await handshake(clientCa.cert, one) }))?.user.groups, ['system:masters', 'system:authenticated']);

  const none = await clientCa.issueClient({ commonName: 'solo' });
  assert.deepEqual((await authenticator.authenticate({ headers: {}, tls: await handshake(clientCa.cert, none) }))?.user.groups, ['system:authenticated']);

  // No certificate at all: anonymous.
  assert.equal((await authenticator.authenticate({ headers: {}, tls: await handshake(clientCa.cert) }))?.user.name, 'system:anonymous');

  // A certificate from a CA the server does not trust: 401, not anonymous.
  const foreign = await foreignCa.issueClient({ commonName: 'mallory', organizations: ['system:masters'] });
  await assert.rejects(
    authenticator.authenticate({ headers: {}, tls: await handshake(clientCa.cert, foreign) }),
    (e: unknown) => e instanceof AuthenticationError && /^verifying certificate SN=\d+, SKID=, AKID=([0-9A-F]{2}:)+[0-9A-F]{2} failed: /.test(e.message),
  );

  // The handshake trusted the foreign CA too, but it is not the client CA: still refused.
  await assert.rejects(
    authenticator.authenticate({ headers: {}, tls: await handshake([clientCa.cert, foreignCa.cert], foreign) }),
    (e: unknown) => e instanceof AuthenticationError && / failed: x509: certificate signed by unknown authority$/.test(e.message),
  );
});

test('x509: a bundle without certificates is refused at construction', () => {
  assert.throws(() => new X509Authenticator('not a pem'), /client CA bundle holds no certificate/);
});

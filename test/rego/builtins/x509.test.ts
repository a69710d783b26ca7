import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CertificateAuthority } from '../../../src/common/tls.js';
import { call, json } from './call.js';

test('parse_certificates returns Go-named fields of each certificate', async () => {
  const ca = await CertificateAuthority.create('test-root');
  const server = await ca.issueServer({ commonName: 'api.example.com', hosts: ['api.example.com', '10.0.0.1'] });
  const client = await ca.issueClient({ commonName: 'alice', organizations: ['admins', 'devs'] });
  const certs = JSON.parse(json('crypto.x509.parse_certificates', server.cert + client.cert)) as Record<string, unknown>[];
  assert.equal(certs.length, 2);
  const [s, c] = certs as [Record<string, any>, Record<string, any>];
  assert.equal(s.Subject.CommonName, 'api.example.com');
  assert.equal(s.Issuer.CommonName, 'test-root');
  assert.deepEqual(s.DNSNames, ['api.example.com']);
  assert.deepEqual(s.IPAddresses, ['10.0.0.1']);
  assert.deepEqual(s.ExtKeyUsage, [1]);
  assert.equal(s.IsCA, false);
  assert.equal(s.PublicKeyAlgorithm, 3);
  assert.match(s.NotAfter, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.deepEqual(c.Subject.Organization, ['admins', 'devs']);
  assert.deepEqual(c.Subject.Names[0], { Type: [2, 5, 4, 10], Value: 'admins' });
  assert.deepEqual(c.ExtKeyUsage, [2]);
  // base64 of the PEM text is accepted too
  assert.equal((call('crypto.x509.parse_certificates', [Buffer.from(ca.cert).toString('base64')]) as unknown[]).length, 1);
});

test('parse_and_verify_certificates accepts a chain from root to leaf only', async () => {
  const ca = await CertificateAuthority.create('root');
  const other = await CertificateAuthority.create('other');
  const leaf = await ca.issueServer({ commonName: 'svc', hosts: ['svc'] });
  const now = BigInt(Date.now()) * 1_000_000n;
  const verify = (pem: string) => call('crypto.x509.parse_and_verify_certificates', [pem], { timeNs: now }) as [boolean, unknown[]];
  const [ok, certs] = verify(ca.cert + leaf.cert);
  assert.equal(ok, true);
  assert.equal(certs.length, 2);
  assert.deepEqual(verify(other.cert + leaf.cert), [false, []]);
  assert.deepEqual(verify(leaf.cert), [false, []]);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { CertificateAuthority, certificateInfo, ensureCertificateAuthority, readPemFile } from '../../src/common/tls.js';
import { StartupError } from '../../src/common/errors.js';

test('a server certificate verifies against its CA over real TLS, and a client certificate carries CN and O', async () => {
  const ca = await CertificateAuthority.create('test-ca');
  const server = await ca.issueServer({ commonName: 'localhost', hosts: ['127.0.0.1', 'localhost'] });
  const client = await ca.issueClient({ commonName: 'jane', organizations: ['devs', 'ops'] });

  const info = certificateInfo(client.cert);
  assert.equal(info.commonName, 'jane');
  assert.deepEqual(info.organizations, ['devs', 'ops']);

  const seen: Array<{ cn?: string | string[]; o?: string | string[] }> = [];
  const srv = https.createServer({ cert: server.cert, key: server.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
    seen.push({ cn: peer.subject.CN, o: peer.subject.O });
    res.end('ok');
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  try {
    const body = await new Promise<string>((resolve, reject) => {
      https
        .get({ host: '127.0.0.1', port, path: '/', ca: ca.cert, cert: client.cert, key: client.key }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c)).on('end', () => resolve(text));
        })
        .on('error', reject);
    });
    assert.equal(body, 'ok');
    assert.deepEqual(seen, [{ cn: 'jane', o: ['devs', 'ops'] }]);
  } finally {
    srv.close();
  }
});

test('ensureCertificateAuthority creates once, then loads the same CA, and never overwrites half a pair', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pki-'));
  try {
    const first = await ensureCertificateAuthority(dir, 'portcullis-ca');
    const second = await ensureCertificateAuthority(dir, 'portcullis-ca');
    assert.equal(second.cert, first.cert);
    const leaf = await second.issueClient({ commonName: 'admin', organizations: ['system:masters'] });
    assert.equal(certificateInfo(leaf.cert).commonName, 'admin');

    await rm(path.join(dir, 'ca.key'));
    await assert.rejects(ensureCertificateAuthority(dir, 'x'), (e: unknown) => e instanceof StartupError && /ca\.crt without ca\.key/.test(e.message));
    assert.equal(await readFile(path.join(dir, 'ca.crt'), 'utf8'), first.cert);

    await writeFile(path.join(dir, 'junk.pem'), 'not pem');
    await assert.rejects(readPemFile(path.join(dir, 'junk.pem'), 'CERTIFICATE'), /junk\.pem: no PEM certificate found/);
    await assert.rejects(readPemFile(path.join(dir, 'missing.pem'), 'CERTIFICATE'), /missing\.pem: cannot read \(ENOENT\)/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

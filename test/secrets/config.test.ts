// The server configuration file (HCL and JSON), and a TLS listener used by the CLI with -ca-cert.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CertificateAuthority } from '../../src/common/tls.js';
import { silentLogger } from '../../src/common/log.js';
import { parseServerConfig } from '../../src/secrets/config.js';
import { startService } from '../../src/secrets/server.js';
import { secretsCli } from './cli-harness.js';
import { tempDir } from './helpers.js';

test('HCL and JSON configurations', () => {
  const hcl = parseServerConfig(`
    storage "sqlite" { path = "/tmp/s.db" }
    listener "tcp" {
      address     = "127.0.0.1:8300"
      tls_disable = true
    }
    default_lease_ttl = "1h"
    ui = true
    strict_vault = true
  `);
  assert.deepEqual(hcl, {
    storageUrl: 'sqlite:/tmp/s.db', storageType: 'sqlite', listener: { host: '127.0.0.1', port: 8300 },
    defaultLeaseTtl: 3600, maxLeaseTtl: undefined, strictVault: true, logLevel: undefined, maxRequestSize: undefined,
  });
  const json = parseServerConfig(JSON.stringify({ storage: { etcd: { address: 'http://127.0.0.1:2379,http://127.0.0.2:2379' } }, listener: [{ tcp: { address: '0.0.0.0:8200', tls_cert_file: 'c', tls_key_file: 'k' } }] }));
  assert.equal(json.storageUrl, 'etcd://127.0.0.1:2379,127.0.0.2:2379?prefix=%2Fportcullis%2Fsecrets%2F');
  assert.deepEqual(json.listener, { host: '0.0.0.0', port: 8200, tlsCertFile: 'c', tlsKeyFile: 'k' });
  assert.throws(() => parseServerConfig('storage "file" { path = "x" }'), /storage "file" is not supported/);
  assert.throws(() => parseServerConfig('storage "inmem" {}\nlistener "tcp" { address = "127.0.0.1:8200" }'), /needs tls_cert_file and tls_key_file, or tls_disable = true/);
  assert.throws(() => parseServerConfig('storage "inmem" {}\nbogus = 1'), /unknown key "bogus"/);
  assert.throws(() => parseServerConfig('storage "inmem" {'), /At 1:\d+: expected "}"/);
});

test('a TLS listener, reached by the CLI with -ca-cert', async () => {
  const dir = tempDir('secrets-tls-');
  const ca = await CertificateAuthority.create('test CA');
  const pair = await ca.issueServer({ commonName: 'secrets', hosts: ['127.0.0.1', 'localhost'] });
  writeFileSync(path.join(dir, 'ca.crt'), ca.cert);
  writeFileSync(path.join(dir, 'server.crt'), pair.cert);
  writeFileSync(path.join(dir, 'server.key'), pair.key);
  const config = parseServerConfig(`storage "inmem" {}\nlistener "tcp" {\n  address = "127.0.0.1:0"\n  tls_cert_file = "${path.join(dir, 'server.crt')}"\n  tls_key_file = "${path.join(dir, 'server.key')}"\n}\n`);
  const service = await startService(config, silentLogger());
  try {
    assert.match(service.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const env = { SECRETS_ADDR: service.url, HOME: dir };
    const untrusted = await secretsCli(['status'], { env });
    assert.equal(untrusted.code, 2);
    assert.match(untrusted.stderr, /certificate/);
    const init = await secretsCli(['operator', 'init', '-key-shares=1', '-key-threshold=1', `-ca-cert=${path.join(dir, 'ca.crt')}`, '-format=json'], { env });
    assert.equal(init.code, 0, init.stderr);
    const { unseal_keys_b64: keys, root_token: root } = JSON.parse(init.stdout);
    const unsealed = await secretsCli(['operator', 'unseal', `-ca-cert=${path.join(dir, 'ca.crt')}`], { env, input: `${keys[0]}\n` });
    assert.match(unsealed.stdout, /^Sealed\s+false$/m);
    const list = await secretsCli(['list', `-ca-cert=${path.join(dir, 'ca.crt')}`, `-token=${root}`, 'auth/token/accessors'], { env });
    assert.equal(list.code, 0, list.stderr);
  } finally {
    await service.close();
  }
});

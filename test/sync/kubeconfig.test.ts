import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { loadKubeconfig } from '../../src/sync/kubeconfig.js';
import { listPath, parseReplicatedResource } from '../../src/sync/replicate.js';
import { StartupError, UsageError } from '../../src/common/errors.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

test('a kubeconfig gives the current context\'s server, CA and credentials; files are read relative to it', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kc-'));
  try {
    await writeFile(path.join(dir, 'token'), 'tok-from-file\n');
    const file = path.join(dir, 'config');
    await writeFile(
      file,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'admin',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443/', 'certificate-authority-data': b64('CA PEM') } }],
        users: [
          { name: 'admin', user: { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') } },
          { name: 'bot', user: { tokenFile: 'token' } },
          { name: 'old', user: { username: 'u', password: 'p' } },
        ],
        contexts: [
          { name: 'admin', context: { cluster: 'c', user: 'admin' } },
          { name: 'bot', context: { cluster: 'c', user: 'bot' } },
          { name: 'old', context: { cluster: 'c', user: 'old' } },
        ],
      }),
    );
    const admin = await loadKubeconfig(file);
    assert.equal(admin.server, 'https://127.0.0.1:6443');
    assert.equal(admin.ca, 'CA PEM');
    assert.equal(admin.clientCert, 'CERT');
    assert.equal(admin.clientKey, 'KEY');
    assert.equal(admin.insecureSkipTlsVerify, false);
    assert.equal((await loadKubeconfig(file, 'bot')).token, 'tok-from-file');
    const old = await loadKubeconfig(file, 'old');
    assert.deepEqual([old.username, old.password], ['u', 'p']);
    await assert.rejects(loadKubeconfig(file, 'nope'), (e: unknown) => e instanceof StartupError && e.message === `kubeconfig ${file}: no context named "nope"`);
    await assert.rejects(loadKubeconfig(path.join(dir, 'missing')), StartupError);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('--replicate takes [group/]version/resource', () => {
  const pods = parseReplicatedResource('v1/pods', true);
  assert.deepEqual(pods, { group: '', version: 'v1', resource: 'pods', namespaced: true });
  assert.equal(listPath(pods), '/api/v1/pods');
  const ingresses = parseReplicatedResource('networking.k8s.io/v1/ingresses', true);
  assert.equal(listPath(ingresses), '/apis/networking.k8s.io/v1/ingresses');
  for (const bad of ['pods', 'a/b/c/d', 'v1/', '/v1/pods']) {
    assert.throws(() => parseReplicatedResource(bad, true), (e: unknown) => e instanceof UsageError && /want \[group\/\]version\/resource/.test(e.message));
  }
});

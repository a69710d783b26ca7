// The secrets service in `portcullis up`: first run initialises (root token and unseal keys in 0600
// files), every run unseals itself, data survives a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { up } from '../../src/cli/up.js';
import { secretsService } from '../../src/secrets/cli.js';
import { http, tempDir } from './helpers.js';

test('up initialises once, unseals on every start, keeps data', async () => {
  const dataDir = tempDir('secrets-up-');
  let stack = await up([secretsService], { dataDir, ports: { secrets: 0 }, logLevel: 'silent' });
  const url = stack.services.get('secrets')!.url!;
  const tokenFile = path.join(dataDir, 'secrets-root-token');
  const keysFile = path.join(dataDir, 'secrets-unseal-keys.json');
  assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
  assert.equal(statSync(keysFile).mode & 0o777, 0o600);
  const root = readFileSync(tokenFile, 'utf8').trim();
  assert.match(root, /^hvs\./);
  assert.equal(JSON.parse(readFileSync(keysFile, 'utf8')).keys_base64.length, 5);
  assert.match(stack.banner(), /secrets: http:\/\/127\.0\.0\.1:\d+\n  root token: .*secrets-root-token/);
  assert.equal((await http(url, 'GET', 'sys/seal-status')).body.sealed, false);
  assert.equal((await http(url, 'POST', 'sys/mounts/kv', { token: root, body: { type: 'kv' } })).status, 204);
  assert.equal((await http(url, 'POST', 'kv/app', { token: root, body: { password: 'x-secret-x' } })).status, 204);
  await stack.close();

  stack = await up([secretsService], { dataDir, ports: { secrets: 0 }, logLevel: 'silent' });
  try {
    const again = stack.services.get('secrets')!.url!;
    assert.equal(readFileSync(tokenFile, 'utf8').trim(), root, 'not re-initialised');
    const read = await http(again, 'GET', 'kv/app', { token: root });
    assert.deepEqual(read.body.data, { password: 'x-secret-x' });
    const db = readFileSync(path.join(dataDir, 'secrets', 'secrets.db'));
    assert.equal(db.includes(Buffer.from('x-secret-x')), false);
  } finally {
    await stack.close();
  }
});

// `portcullis policy run -s` as a user runs it: the seed's policy file, the seed's curl requests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { call } from './helpers.js';

const listening = /policy engine listening on (http:\/\/127\.0\.0\.1:\d+)/;

test('policy run -s with the seed policy answers the seed curl examples exactly', async () => {
  const child = spawnCli(['policy', 'run', '-s', '--v0-compatible', '--addr', '127.0.0.1:0', 'examples/http-authz/policy.rego', 'examples/http-authz/data.json']);
  try {
    const base = listening.exec(await waitForOutput(child, listening))![1]!;
    // curl -X POST localhost:8181/v1/data/httpapi/authz -d '{"input": {...}}'
    const yes = await call(base, 'POST', '/v1/data/httpapi/authz', '{"input": {"method": "GET", "path": ["salary", "bob"], "user": "bob"}}');
    assert.equal(yes.status, 200);
    assert.equal(yes.text, '{"result":{"allow":true}}\n');
    const no = await call(base, 'POST', '/v1/data/httpapi/authz', '{"input": {"method": "GET", "path": ["salary", "bob"], "user": "alice"}}');
    assert.equal(no.text, '{"result":{"allow":false}}\n');
    const manager = await call(base, 'POST', '/v1/data/httpapi/authz', '{"input": {"method": "GET", "path": ["salary", "alice"], "user": "bob"}}');
    assert.equal(manager.text, '{"result":{"allow":true}}\n');
    const list = await call(base, 'GET', '/v1/policies');
    assert.deepEqual(list.json.result.map((p: { id: string }) => p.id), ['examples/http-authz/policy.rego']);
  } finally {
    child.kill('SIGTERM');
  }
});

test('policy run without -s, or with a bad address, is a one-line usage error', async () => {
  const noServer = await runCli(['policy', 'run']);
  assert.equal(noServer.code, 2);
  assert.equal(noServer.stderr, 'portcullis: policy run: only server mode is available; add -s (--server)\n');
  const badAddr = await runCli(['policy', 'run', '-s', '--addr', 'nowhere']);
  assert.equal(badAddr.code, 2);
  assert.match(badAddr.stderr, /^portcullis: --addr: invalid address "nowhere": want HOST:PORT\n$/);
});

test('a policy file that does not compile stops start-up with its location', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'policy-cli-'));
  try {
    const file = path.join(dir, 'broken.rego');
    await writeFile(file, 'package broken\n\nallow if {\n');
    const result = await runCli(['policy', 'run', '-s', '--addr', '127.0.0.1:0', file]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`^portcullis: loading ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: error\\(s\\) occurred while compiling module\\(s\\); ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: rego_parse_error: `));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('--set default_decision and decision_logs.console take effect', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'policy-cli-'));
  const file = path.join(dir, 'entry.rego');
  await writeFile(file, 'package entry\n\ndecide := {"hello": input.name}\n');
  const child = spawnCli(['policy', 'run', '-s', '--addr', '127.0.0.1:0', '--set', 'default_decision=/entry/decide', '--set', 'decision_logs.console=true', file]);
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  try {
    const base = listening.exec(await waitForOutput(child, listening))![1]!;
    const reply = await call(base, 'POST', '/', '{"name": "world"}');
    assert.equal(reply.text, '{"hello":"world"}\n');
    // The decision log line reaches our pipe shortly after the reply.
    const logged = () => stderr.split('\n').filter((l) => l.includes('"Decision Log"'));
    for (let i = 0; i < 100 && logged().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const entry = JSON.parse(logged()[0]!);
    assert.equal(entry.path, 'entry/decide');
    assert.deepEqual(entry.result, { hello: 'world' });
  } finally {
    child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
});

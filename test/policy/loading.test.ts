// What the engine loads and keeps: files and directories, `prefix:file` data, bundles (directory and
// .tar.gz with a manifest), reload on change (-w), and policies persisted across a restart (up).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../src/common/log.js';
import { call, SEED_POLICY_V1, startEngine } from './helpers.js';

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'policy-load-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Poll until `check` stops throwing (file watching is asynchronous). */
async function eventually(check: () => Promise<void>, attempts = 100): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await check();
    } catch (error) {
      if (i >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

test('directories load policies (id = path) and data at their directory path; prefix:file places data', async (t) => {
  const dir = await tempDir(t);
  await mkdir(path.join(dir, 'tree', 'org', 'teams'), { recursive: true });
  await writeFile(path.join(dir, 'tree', 'authz.rego'), SEED_POLICY_V1);
  await writeFile(path.join(dir, 'tree', 'org', 'teams', 'data.json'), '{"eng": ["ann"]}');
  await writeFile(path.join(dir, 'tree', 'org', 'extra.yaml'), 'region: eu\n');
  await writeFile(path.join(dir, 'tree', '.hidden.rego'), 'this is not rego');
  await writeFile(path.join(dir, 'reports.json'), '{"bob": ["alice"]}');
  const engine = await startEngine({ paths: [path.join(dir, 'tree'), `reports:${path.join(dir, 'reports.json')}`], ignore: ['.*'] });
  t.after(() => engine.close());
  assert.deepEqual((await call(engine.url, 'GET', '/v1/data/org')).json, { result: { teams: { eng: ['ann'] }, region: 'eu' } });
  assert.deepEqual((await call(engine.url, 'GET', '/v1/data/reports')).json, { result: { bob: ['alice'] } });
  const ids = (await call(engine.url, 'GET', '/v1/policies')).json.result.map((p: { id: string }) => p.id);
  assert.deepEqual(ids, [path.join(dir, 'tree', 'authz.rego')]);
  const decision = await call(engine.url, 'POST', '/v1/data/httpapi/authz/allow', { input: { method: 'GET', path: ['salary', 'alice'], user: 'bob' } });
  assert.equal(decision.json.result, true);
});

test('a .tar.gz bundle loads with its manifest revision and owns its roots', async (t) => {
  const dir = await tempDir(t);
  const src = path.join(dir, 'src');
  await mkdir(path.join(src, 'httpapi', 'authz'), { recursive: true });
  await mkdir(path.join(src, 'reports'), { recursive: true });
  await writeFile(path.join(src, '.manifest'), JSON.stringify({ revision: 'rev-42', roots: ['httpapi', 'reports'] }));
  await writeFile(path.join(src, 'httpapi', 'authz', 'policy.rego'), SEED_POLICY_V1);
  await writeFile(path.join(src, 'reports', 'data.json'), '{"bob": ["alice"]}');
  const archive = path.join(dir, 'bundle.tar.gz');
  execFileSync('tar', ['-czf', archive, '-C', src, '.manifest', 'httpapi', 'reports']);
  const engine = await startEngine({ paths: [archive], bundleMode: true });
  t.after(() => engine.close());
  const decision = await call(engine.url, 'POST', '/v1/data/httpapi/authz?provenance=true', { input: { method: 'GET', path: ['salary', 'alice'], user: 'bob' } });
  assert.deepEqual(decision.json.result, { allow: true });
  assert.deepEqual(decision.json.provenance.bundles, { [archive]: { revision: 'rev-42' } });
  const ids = (await call(engine.url, 'GET', '/v1/policies')).json.result.map((p: { id: string }) => p.id);
  assert.deepEqual(ids, [`${archive}/httpapi/authz/policy.rego`]);
  const owned = await call(engine.url, 'PUT', '/v1/data/reports/x', '1');
  assert.equal(owned.status, 400);
  assert.deepEqual(owned.json, { code: 'invalid_parameter', message: `path reports/x is owned by bundle ${JSON.stringify(archive)}` });
  const free = await call(engine.url, 'PUT', '/v1/data/elsewhere', '1');
  assert.equal(free.status, 204);
});

test('-w reloads changed files; a broken edit is refused and the old policy keeps answering', async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'flag.rego');
  await writeFile(file, 'package flag\n\non := 1\n');
  const log = new PassThrough();
  let logged = '';
  log.on('data', (chunk) => (logged += chunk));
  const engine = await startEngine({ paths: [dir], watch: true, logger: createLogger({ level: 'info', destination: log }) });
  t.after(() => engine.close());
  assert.deepEqual((await call(engine.url, 'GET', '/v1/data/flag/on')).json, { result: 1 });
  await writeFile(file, 'package flag\n\non := 2\n');
  await eventually(async () => assert.deepEqual((await call(engine.url, 'GET', '/v1/data/flag/on')).json, { result: 2 }));
  await writeFile(file, 'package flag\n\non := \n');
  await eventually(async () => assert.match(logged, /reload failed; keeping the previous policies and data/));
  assert.deepEqual((await call(engine.url, 'GET', '/v1/data/flag/on')).json, { result: 2 });
});

test('with a persistence directory, policies and data survive a restart', async (t) => {
  const dir = await tempDir(t);
  const first = await startEngine({ persistDir: dir });
  assert.equal((await call(first.url, 'PUT', '/v1/policies/team/a/authz.rego', SEED_POLICY_V1)).status, 200);
  assert.equal((await call(first.url, 'PUT', '/v1/data/reports', '{"bob": ["alice"]}')).status, 204);
  assert.equal((await call(first.url, 'PUT', '/v1/policies/temp', 'package temp\n\nx := 1\n')).status, 200);
  assert.equal((await call(first.url, 'DELETE', '/v1/policies/temp')).status, 200);
  await first.close();
  const second = await startEngine({ persistDir: dir });
  t.after(() => second.close());
  const ids = (await call(second.url, 'GET', '/v1/policies')).json.result.map((p: { id: string }) => p.id);
  assert.deepEqual(ids, ['team/a/authz.rego']);
  const decision = await call(second.url, 'POST', '/v1/data/httpapi/authz', { input: { method: 'GET', path: ['salary', 'alice'], user: 'bob' } });
  assert.deepEqual(decision.json.result, { allow: true });
});

test('a bundle directory without a manifest owns everything; status reports it when configured', async (t) => {
  const dir = await tempDir(t);
  await mkdir(path.join(dir, 'b', 'app'), { recursive: true });
  await writeFile(path.join(dir, 'b', 'app', 'rules.rego'), 'package app\n\nanswer := data.app.value\n');
  await writeFile(path.join(dir, 'b', 'app', 'data.json'), '{"value": 42}');
  const bundle = path.join(dir, 'b');
  const engine = await startEngine({ paths: [bundle], bundleMode: true, config: { status: { console: true } } });
  t.after(() => engine.close());
  assert.deepEqual((await call(engine.url, 'GET', '/v1/data/app/answer')).json.result, 42);
  const refused = await call(engine.url, 'PUT', '/v1/data/other', '1');
  assert.deepEqual(refused.json, { code: 'invalid_parameter', message: `all paths owned by bundle ${JSON.stringify(bundle)}` });
  const status = await call(engine.url, 'GET', '/v1/status');
  assert.equal(status.status, 200);
  assert.deepEqual(status.json.result.bundles, { [bundle]: { name: bundle, active_revision: '' } });
  assert.equal(typeof status.json.result.labels.id, 'string');
});

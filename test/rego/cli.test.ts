// `portcullis policy eval|test|check` as a user runs them: real processes, real files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function portcullis(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/entry.ts', ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'rego-cli-'));
writeFileSync(
  path.join(dir, 'authz.rego'),
  `package httpapi.authz
import input
default allow = false
allow {
  input.method == "GET"
  input.path = ["finance", "salary", user]
  input.user == user
}
`,
);
writeFileSync(
  path.join(dir, 'authz_test.rego'),
  `package httpapi.authz
test_owner_allowed { allow with input as {"method": "GET", "path": ["finance", "salary", "bob"], "user": "bob"} }
test_other_allowed { allow with input as {"method": "GET", "path": ["finance", "salary", "bob"], "user": "alice"} }
todo_test_admin { allow }
`,
);
writeFileSync(path.join(dir, 'input.json'), '{"method": "GET", "path": ["finance", "salary", "bob"], "user": "bob"}');

test('policy eval prints opa eval\'s JSON result', () => {
  const r = portcullis('policy', 'eval', '--v0-compatible', '-d', path.join(dir, 'authz.rego'), '-i', path.join(dir, 'input.json'), 'data.httpapi.authz');
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    result: [{ expressions: [{ value: { allow: true }, text: 'data.httpapi.authz', location: { row: 1, col: 1 } }], bindings: {} }],
  });
  const undefinedResult = portcullis('policy', 'eval', 'data.nothing.here');
  assert.equal(undefinedResult.status, 0);
  assert.deepEqual(JSON.parse(undefinedResult.stdout), {});
});

test('policy eval reports errors with OPA\'s code and location, exit 1', () => {
  const r = portcullis('policy', 'eval', 'x := [1,');
  assert.equal(r.status, 1);
  assert.deepEqual(JSON.parse(r.stdout), {
    errors: [{ code: 'rego_parse_error', message: 'unexpected eof token', location: { file: 'query', row: 1, col: 9 } }],
  });
});

test('policy test reports PASS, FAIL and SKIPPED per test and a summary, exit 1 on failure', () => {
  const r = portcullis('policy', 'test', '--v0-compatible', dir);
  assert.equal(r.status, 1);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines[0], `${path.join(dir, 'authz_test.rego')}:`);
  assert.match(lines[1]!, /^data\.httpapi\.authz\.test_owner_allowed: PASS \([\d.]+(µs|ms)\)$/);
  assert.match(lines[2]!, /^data\.httpapi\.authz\.test_other_allowed: FAIL \([\d.]+(µs|ms)\)$/);
  assert.equal(lines[3], 'data.httpapi.authz.todo_test_admin: SKIPPED');
  assert.deepEqual(lines.slice(4), ['-'.repeat(80), 'PASS: 1/3', 'FAIL: 1/3', 'SKIPPED: 1/3']);
});

test('policy check reports every error with file and row, exit 1', () => {
  const r = portcullis('policy', 'check', dir);
  assert.equal(r.status, 1);
  assert.equal(
    r.stderr.split('\n').slice(0, 3).join('\n'),
    [
      '2 errors occurred:',
      `${path.join(dir, 'authz.rego')}:4: rego_parse_error: \`if\` keyword is required before rule body`,
      `${path.join(dir, 'authz_test.rego')}:2: rego_parse_error: \`if\` keyword is required before rule body`,
    ].join('\n'),
  );
  assert.equal(portcullis('policy', 'check', '--v0-compatible', dir).status, 0);
});

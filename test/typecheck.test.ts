import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

test('the whole tree type-checks under strict TypeScript (tsc --noEmit)', () => {
  const result = spawnSync(process.execPath, [tsc, '--noEmit', '-p', 'tsconfig.json'], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stdout + result.stderr);
});

test('the build that npm ci runs (prepare) succeeds, declarations included', () => {
  // --noEmit skips declaration checks (e.g. TS4094), which only the real emit reports.
  const out = mkdtempSync(path.join(tmpdir(), 'portcullis-build-'));
  try {
    const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', out, '--tsBuildInfoFile', path.join(out, '.tsbuildinfo')], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stdout + result.stderr);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

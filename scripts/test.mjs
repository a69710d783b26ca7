#!/usr/bin/env node
// Runs the test suite with Node's own test runner on the TypeScript sources (through tsx).
//   npm test                       every *.test.ts under test/ and examples/
//   npm test -- test/storage ...   only files under the given paths
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';

const roots = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const passthrough = process.argv.slice(2).filter((a) => a.startsWith('-'));
const files = [];
for (const root of roots.length ? roots : ['test', 'examples']) collect(root);
if (files.length === 0) {
  console.error(`no test files under ${roots.join(', ') || 'test/ examples/'}`);
  process.exit(1);
}
files.sort();

const concurrency = process.env.TEST_CONCURRENCY ?? String(Math.max(2, os.availableParallelism()));
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...passthrough, ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);

function collect(entry) {
  let info;
  try {
    info = statSync(entry);
  } catch {
    return;
  }
  if (info.isFile()) {
    if (entry.endsWith('.test.ts')) files.push(entry);
    return;
  }
  for (const name of readdirSync(entry)) {
    if (name === 'node_modules' || name === 'fixtures') continue;
    collect(path.join(entry, name));
  }
}

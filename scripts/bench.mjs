#!/usr/bin/env node
// Runs benchmarks: each bench/<name>.ts in its own Node process through tsx, one after another.
//   npm run bench                          every benchmark in bench/
//   npm run bench -- storage               bench/storage.ts
//   npm run bench -- storage policy-server --duration 5
//                                          the names come first; everything from the first
//                                          argument that starts with "-" goes to each benchmark
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

const BENCH = 'bench';
const args = process.argv.slice(2);
const firstFlag = args.findIndex((arg) => arg.startsWith('-'));
const names = firstFlag === -1 ? args : args.slice(0, firstFlag);
const passthrough = firstFlag === -1 ? [] : args.slice(firstFlag);

const available = readdirSync(BENCH)
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
  .map((file) => file.slice(0, -'.ts'.length))
  .sort();

for (const name of names) {
  if (!existsSync(path.join(BENCH, `${name}.ts`))) {
    console.error(`bench: no benchmark named ${JSON.stringify(name)}; available: ${available.join(', ')}`);
    process.exit(2);
  }
}

let failed = 0;
for (const name of names.length > 0 ? names : available) {
  console.log(`\n== bench/${name}.ts ${passthrough.join(' ')}`.trimEnd());
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(BENCH, `${name}.ts`), ...passthrough], { stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`bench: ${name} failed (${result.status ?? result.signal})`);
    failed++;
  }
}
process.exit(failed > 0 ? 1 : 0);

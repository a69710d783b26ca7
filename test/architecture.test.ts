// The dependency rule of DESIGN.md, checked on every import of every source file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const SRC = path.resolve('src');

/** For each area of src/, the other areas it may import. */
const ALLOWED: Record<string, readonly string[]> = {
  common: [],
  storage: ['common'],
  rego: [],
  policy: ['rego', 'common', 'storage'],
  secrets: ['common', 'storage'],
  cluster: ['common', 'storage'],
  sync: ['common'],
  cli: ['common', 'storage', 'policy', 'secrets', 'cluster', 'sync', 'rego'],
};

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) yield* sourceFiles(full);
    else if (full.endsWith('.ts')) yield full;
  }
}

function areaOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0]!;
}

test('every area of src/ imports only what the dependency rule allows', () => {
  const violations: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const area = areaOf(file);
    const allowed = ALLOWED[area];
    if (!allowed) {
      violations.push(`${path.relative('.', file)}: area "${area}" is not in DESIGN.md's layout`);
      continue;
    }
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
      const spec = match[1] ?? match[2]!;
      const target = path.resolve(path.dirname(file), spec);
      if (!target.startsWith(SRC + path.sep)) {
        violations.push(`${path.relative('.', file)} imports ${spec}, outside src/`);
        continue;
      }
      const targetArea = areaOf(target);
      if (targetArea !== area && !allowed.includes(targetArea)) {
        violations.push(`${path.relative('.', file)} (${area}) imports ${spec} (${targetArea})`);
      }
    }
  }
  assert.deepEqual(violations, []);
});

test('the checker itself sees a forbidden import', () => {
  // Guard against a regex that silently matches nothing.
  const sample = `import { x } from '../cluster/registry.js';`;
  const found = [...sample.matchAll(/(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/g)].map((m) => m[1]);
  assert.deepEqual(found, ['../cluster/registry.js']);
});

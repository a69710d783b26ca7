// The Rego compliance suites (../shared/conformance) run in-process; the pass rate of each folder
// must not drop below the floor kept in src/policy/conformance/floor.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { runSuites } from '../../src/policy/conformance/runner.js';

const SUITES = path.resolve('..', 'shared', 'conformance');
const floor = JSON.parse(readFileSync('src/policy/conformance/floor.json', 'utf8')) as Record<string, number>;

for (const suite of ['opa', 'regorus', 'regocpp']) {
  test(`conformance: ${suite} passes at least ${floor[suite]! * 100}% of its runnable cases`, { skip: !existsSync(path.join(SUITES, suite)) && 'suite folder not present' }, () => {
    const summary = runSuites([path.join(SUITES, suite)]);
    const rate = summary.passed / (summary.passed + summary.failed);
    const failures = summary.outcomes.filter((o) => o.status === 'failed').slice(0, 20).map((o) => `${o.file}: ${o.note}: ${o.reason}`);
    assert.ok(
      rate >= floor[suite]!,
      `${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped (${(rate * 100).toFixed(1)}%); first failures:\n${failures.join('\n')}`,
    );
    for (const o of summary.outcomes) if (o.status === 'skipped') assert.ok(o.reason, `${o.file}: ${o.note} is skipped without a reason`);
  });
}

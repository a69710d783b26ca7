/**
 * `portcullis policy test [--v0-compatible] PATH...`: runs every `test_*` rule of the loaded modules
 * (and reports `todo_*` rules as skipped), as `opa test -v` does: one line per test grouped by file,
 * then `PASS: n/N`, `FAIL: n/N`, `SKIPPED: n/N`, `ERROR: n/N`. Exit 1 if any test failed or erred.
 * A test passes when its rule is defined and not false.
 */
import { CommandError } from '../../common/errors.js';
import { Command } from 'commander';
import { RegoError, RegoErrors } from '../../rego/index.js';
import { loadPolicy } from './eval.js';

type Outcome = 'PASS' | 'FAIL' | 'SKIPPED' | 'ERROR';

export function testCommand(): Command {
  return new Command('test')
    .summary('run Rego tests (test_ rules)')
    .description('Run the test_ rules of the Rego modules under the given paths (todo_ rules are reported as skipped).')
    .argument('<paths...>', 'policy, test and data files or directories')
    .option('--v0-compatible', 'parse modules as Rego v0')
    .action(async (paths: string[], flags: { v0Compatible?: boolean }) => {
      let loaded;
      try {
        loaded = await loadPolicy(paths, flags.v0Compatible ? 'v0' : 'v1');
      } catch (error) {
        if (error instanceof RegoErrors || error instanceof RegoError) {
          process.stderr.write(error.message + '\n');
          throw new CommandError('policy test: the modules do not compile', 1);
        }
        throw error;
      }
      const { policy, data } = loaded;
      const counts: Record<Outcome, number> = { PASS: 0, FAIL: 0, SKIPPED: 0, ERROR: 0 };
      let total = 0;
      for (const [file, module] of policy.modules) {
        const pkg = module.package.path.slice(1).map((t) => (t as { value: string }).value);
        const names = [
          ...new Set(
            module.rules
              .filter((r) => r.head.ref.length === 1 && !r.head.args && r.head.name && /^(test|todo)_/.test(r.head.name))
              .map((r) => r.head.name!),
          ),
        ];
        if (names.length === 0) continue;
        process.stdout.write(`${file}:\n`);
        for (const name of names) {
          const full = ['data', ...pkg, name].join('.');
          total++;
          if (name.startsWith('todo_')) {
            counts.SKIPPED++;
            process.stdout.write(`${full}: SKIPPED\n`);
            continue;
          }
          const started = process.hrtime.bigint();
          let outcome: Outcome;
          let detail = '';
          try {
            const result = policy.prepareRef([...pkg, name]).eval({ data, printHook: (line) => process.stdout.write(`  ${line}\n`) });
            outcome = result.defined && result.value !== false ? 'PASS' : 'FAIL';
          } catch (error) {
            outcome = 'ERROR';
            detail = `\n  ${error instanceof Error ? error.message : String(error)}`;
          }
          counts[outcome]++;
          process.stdout.write(`${full}: ${outcome} (${duration(process.hrtime.bigint() - started)})${detail}\n`);
        }
      }
      process.stdout.write('-'.repeat(80) + '\n');
      for (const outcome of ['PASS', 'FAIL', 'SKIPPED', 'ERROR'] as const) {
        if (counts[outcome] > 0) process.stdout.write(`${outcome}: ${counts[outcome]}/${total}\n`);
      }
      if (total === 0) process.stdout.write('no tests found\n');
      if (counts.FAIL > 0 || counts.ERROR > 0) throw new CommandError(`policy test: ${counts.FAIL + counts.ERROR} of ${total} tests did not pass`, 1);
    });
}

function duration(ns: bigint): string {
  const n = Number(ns);
  if (n < 1e6) return `${(n / 1e3).toFixed(1)}µs`;
  if (n < 1e9) return `${(n / 1e6).toFixed(3)}ms`;
  return `${(n / 1e9).toFixed(3)}s`;
}

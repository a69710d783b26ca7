/**
 * `portcullis policy conformance DIR...`: runs OPA-format YAML compliance cases, prints one line per
 * failing or skipped case (file, note, why) and, last, `N passed, N failed, N skipped`. Exit 1 if
 * anything failed.
 */
import { CommandError } from '../../common/errors.js';
import { Command } from 'commander';
import { runSuites } from '../conformance/runner.js';

export function conformanceCommand(): Command {
  return new Command('conformance')
    .summary('run Rego compliance cases (OPA YAML format)')
    .description('Run the Rego compliance cases in the given directories or files and report failures and skips with reasons.')
    .argument('<paths...>', 'directories or YAML files of cases')
    .option('-v, --verbose', 'also print passing cases')
    .action((paths: string[], flags: { verbose?: boolean }) => {
      const summary = runSuites(paths, (o) => {
        if (o.status === 'passed' && !flags.verbose) return;
        const tag = o.status === 'passed' ? 'PASS' : o.status === 'failed' ? 'FAIL' : 'SKIP';
        process.stdout.write(`${tag} ${o.file}: ${o.note}${o.reason ? `: ${o.reason}` : ''}\n`);
      });
      process.stdout.write(`${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped\n`);
      if (summary.failed > 0) throw new CommandError(`policy conformance: ${summary.failed} case(s) failed`, 1);
    });
}

/**
 * `portcullis policy check [--v0-compatible] PATH...`: parses and compiles the modules and reports
 * every error with its location (`file:row: code: message`), exit 1 on errors, as `opa check` does.
 */
import { CommandError } from '../../common/errors.js';
import { Command } from 'commander';
import { RegoError, RegoErrors } from '../../rego/index.js';
import { formatErrors, loadPolicy } from './eval.js';

export function checkCommand(): Command {
  return new Command('check')
    .summary('parse and compile Rego modules')
    .description('Parse and compile the Rego modules under the given paths and report errors with their locations.')
    .argument('<paths...>', 'policy files or directories')
    .option('--v0-compatible', 'parse modules as Rego v0')
    .option('-f, --format <format>', 'output format: pretty or json', 'pretty')
    .action(async (paths: string[], flags: { v0Compatible?: boolean; format: string }) => {
      try {
        await loadPolicy(paths, flags.v0Compatible ? 'v0' : 'v1');
      } catch (error) {
        if (error instanceof RegoErrors || error instanceof RegoError) {
          process.stderr.write((flags.format === 'json' ? formatErrors(error) : error.message) + '\n');
          throw new CommandError(`policy check: ${error instanceof RegoErrors ? error.errors.length : 1} error(s)`, 1);
        }
        throw error;
      }
    });
}

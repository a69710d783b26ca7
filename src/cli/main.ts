/**
 * The `portcullis` command: one subcommand per service (from `services.ts`) plus `up`.
 * Returns the exit code: 0 success, 1 failure, 2 usage error (unknown command or flag).
 */
import { Command, CommanderError } from 'commander';
import { CommandError, describeError } from '../common/errors.js';
import { services } from './services.js';
import { upCommand } from './up.js';
import { VERSION } from './version.js';

export function buildProgram(): Command {
  const program = new Command('portcullis')
    .description('An access-control stack: a Kubernetes-compatible API server, a Vault-compatible secrets service and an OPA-compatible policy engine.')
    .version(VERSION, '--version', 'print the version')
    .helpCommand(true)
    .showSuggestionAfterError(true);
  for (const service of services) program.addCommand(service.command().summary(service.summary));
  program.addCommand(upCommand(services));
  applyDefaults(program);
  return program;
}

/** Every command of the tree reports errors the same way (commander only copies them to `.command()` children). */
function applyDefaults(command: Command): void {
  command.exitOverride().configureOutput({
    writeOut: (text) => process.stdout.write(text),
    writeErr: (text) => process.stderr.write(text),
    outputError: (text, write) => write(text.trimEnd().split('\n')[0] + '\n'),
  });
  for (const child of command.commands) applyDefaults(child);
}

export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      // Usage mistakes (unknown command, unknown flag, missing argument, no subcommand): commander
      // has already printed one line; the exit code for all of them is 2.
      return error.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`portcullis: ${describeError(error)}\n`);
    if (process.env.PORTCULLIS_DEBUG && error instanceof Error && error.stack) process.stderr.write(error.stack + '\n');
    return error instanceof CommandError ? error.exitCode : 1;
  }
}

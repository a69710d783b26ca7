/**
 * `portcullis policy …` and the policy engine's part in `portcullis up`: the `ServiceModule` listed
 * in src/cli/services.ts. The dependency rule keeps src/policy from importing src/cli, so the
 * object is checked against `ServiceModule` structurally where it is listed.
 *
 * The command is an assembly of subcommands, one factory per file in ./commands/.
 */
import path from 'node:path';
import { Command } from 'commander';
import type { Logger } from '../common/log.js';
import { runCommand } from './commands/run.js';
import { evalCommand } from './commands/eval.js';
import { testCommand } from './commands/test.js';
import { checkCommand } from './commands/check.js';
import { conformanceCommand } from './commands/conformance.js';
import { startPolicyEngine } from './runtime.js';

const subcommands: ReadonlyArray<() => Command> = [
  runCommand,
  evalCommand,
  testCommand,
  checkCommand,
  conformanceCommand,
];

export const policyService = {
  name: 'policy',
  summary: 'the policy engine: Rego and the OPA REST API',
  command(): Command {
    const command = new Command('policy').description('The policy engine: a Rego interpreter behind the OPA REST API.');
    for (const make of subcommands) command.addCommand(make());
    return command;
  },
  up: {
    defaultPort: 8181,
    /** The engine on loopback, its policies and data kept under <dataDir>/policy across restarts. */
    async start(context: { dataDir: string; host: string; port: number; logger: Logger }) {
      const engine = await startPolicyEngine({
        address: { host: context.host, port: context.port },
        logger: context.logger,
        persistDir: path.join(context.dataDir, 'policy'),
      });
      return {
        name: 'policy',
        url: engine.url,
        close: () => engine.close(),
      };
    },
  },
};

/**
 * `portcullis secrets …` in this process (no tsx start-up per call): the same command table,
 * standard input from a string, and errors reported as src/cli/main.ts reports them
 * (`portcullis: <first line>`, the error's exit code). A few tests still spawn the real command.
 */
import { Readable } from 'node:stream';
import { CommandError, describeError } from '../../src/common/errors.js';
import { runSecretsCli } from '../../src/secrets/cli/commands.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function secretsCli(args: readonly string[], options: { env: NodeJS.ProcessEnv; input?: string }): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const stdin = Readable.from([Buffer.from(options.input ?? '')]) as unknown as NodeJS.ReadStream;
  try {
    await runSecretsCli(args, { out: (t) => (stdout += t), err: (t) => (stderr += t), env: options.env, stdin });
    return { code: 0, stdout, stderr };
  } catch (error) {
    if (!(error instanceof CommandError)) throw error;
    stderr += `portcullis: ${describeError(error)}\n`;
    return { code: error.exitCode, stdout, stderr };
  }
}

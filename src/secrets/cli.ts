/**
 * `portcullis secrets …` and the secrets service's part in `portcullis up`: the ServiceModule listed
 * in src/cli/services.ts (checked there structurally: src/secrets may not import src/cli).
 *
 * The whole subtree takes Vault's Go-style flags (`-format=json`), so commander only hands the
 * arguments over; cli/commands.ts parses them.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { UsageError } from '../common/errors.js';
import type { Logger } from '../common/log.js';
import { runSecretsCli } from './cli/commands.js';
import { startService } from './server.js';

const UP_SHARES = 5;
const UP_THRESHOLD = 3;

export const secretsService = {
  name: 'secrets',
  summary: 'the secrets service: a Vault-compatible API and CLI (tokens, policies, KV, auth methods)',
  command(): Command {
    return new Command('secrets')
      .description('The secrets service: a Vault-compatible server and its command line. Run `portcullis secrets help` for the commands.')
      .helpOption(false)
      .allowUnknownOption(true)
      .allowExcessArguments(true)
      .argument('[args...]')
      .action(async (_args: string[], _options: unknown, command: Command) => {
        try {
          await runSecretsCli(command.args, { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t), env: process.env });
        } catch (error) {
          // Usage mistakes read as everywhere else in the command: one `error: …` line, exit 2.
          if (error instanceof UsageError) command.error(`error: ${error.message}`, { exitCode: 2, code: 'portcullis.usage' });
          throw error;
        }
      });
  },
  up: {
    defaultPort: 8200,
    /**
     * SQLite under <dataDir>/secrets. First run: initialise with 5 shares / threshold 3, and — as a
     * development convenience — write the root token to <dataDir>/secrets-root-token and the
     * unseal keys to <dataDir>/secrets-unseal-keys.json (both mode 0600), and mount KV v2 at
     * `secret/` as `-dev` does. Every run: unseal with those keys. Nothing secret goes to the
     * database in clear.
     */
    async start(context: { dataDir: string; host: string; port: number; logger: Logger }) {
      const dir = path.join(context.dataDir, 'secrets');
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const service = await startService(
        { storageUrl: `sqlite:${path.join(dir, 'secrets.db')}`, storageType: 'sqlite', listener: { host: context.host, port: context.port }, strictVault: false },
        context.logger,
      );
      const tokenFile = path.join(context.dataDir, 'secrets-root-token');
      const keysFile = path.join(context.dataDir, 'secrets-unseal-keys.json');
      try {
        const firstRun = !(await service.core.initialized());
        if (firstRun) {
          const init = await service.core.init(UP_SHARES, UP_THRESHOLD);
          await writeFile(tokenFile, init.root_token + '\n', { mode: 0o600 });
          await chmod(tokenFile, 0o600);
          await writeFile(keysFile, JSON.stringify({ keys_base64: init.keys_base64, threshold: UP_THRESHOLD }, null, 2) + '\n', { mode: 0o600 });
          await chmod(keysFile, 0o600);
        }
        const keys = JSON.parse(await readFile(keysFile, 'utf8')) as { keys_base64: string[] };
        for (const key of keys.keys_base64) {
          const status = await service.core.unseal(key, false);
          if (!status.sealed) break;
        }
        // As `-dev` does, so that the seed's KV pair (secret/apikey/<name>) works from the start.
        if (firstRun) await service.core.state.mount('secret', 'secret', { type: 'kv', description: 'key/value secret storage', options: { version: '2' } });
      } catch (error) {
        await service.close();
        throw error;
      }
      return {
        name: 'secrets',
        url: service.url,
        credentials: [
          { label: 'root token', value: tokenFile },
          { label: 'unseal keys (dev convenience)', value: keysFile },
        ],
        details: { rootTokenFile: tokenFile },
        close: () => service.close(),
      };
    },
  },
};

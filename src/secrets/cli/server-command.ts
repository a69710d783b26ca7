/** `portcullis secrets server`: from a configuration file, or `-dev`. */
import { homedir } from 'node:os';
import { UsageError } from '../../common/errors.js';
import { closeOnSignal, parseHostPort } from '../../common/http.js';
import { createLogger } from '../../common/log.js';
import { loadServerConfig } from '../config.js';
import { startDevService, startService } from '../server.js';
import { writeTokenHelper } from './client.js';
import type { Io } from './commands.js';
import type { FlagSpec, FlagValues } from './flags.js';

export const SERVER_FLAGS: readonly FlagSpec[] = [
  { name: 'config', kind: 'string', help: 'configuration file (HCL or JSON)' },
  { name: 'dev', kind: 'bool', help: 'in-memory development server: initialised, unsealed, KV v2 at secret/' },
  { name: 'dev-root-token-id', kind: 'string', help: 'the dev server\'s root token (default: random; $VAULT_DEV_ROOT_TOKEN_ID)' },
  { name: 'dev-listen-address', kind: 'string', help: 'the dev server\'s address (default 127.0.0.1:8200; $VAULT_DEV_LISTEN_ADDRESS)' },
  { name: 'dev-kv-v1', kind: 'bool', help: 'mount secret/ as KV version 1' },
  { name: 'dev-no-store-token', kind: 'bool', help: 'do not write the root token to the token helper file' },
  { name: 'log-level', kind: 'string', help: 'trace, debug, info, warn, error', default: 'info' },
];

export async function runServer(flags: FlagValues, io: Io): Promise<void> {
  if (!flags.dev && !flags.config) throw new UsageError('either -config FILE or -dev is required');
  const config = flags.config ? await loadServerConfig(String(flags.config)) : undefined;
  const logger = createLogger({ level: String(config?.logLevel ?? flags['log-level']), format: 'text', name: 'secrets' });
  if (flags.dev) {
    const listen = parseHostPort(String(flags['dev-listen-address'] || io.env.VAULT_DEV_LISTEN_ADDRESS || '127.0.0.1:8200'));
    const service = await startDevService(
      listen,
      { rootTokenId: String(flags['dev-root-token-id'] || io.env.VAULT_DEV_ROOT_TOKEN_ID || '') || undefined, kvV1: flags['dev-kv-v1'] === true },
      logger,
      config?.strictVault ?? false,
    );
    closeOnSignal(() => service.close());
    let stored = '';
    if (!flags['dev-no-store-token']) stored = await writeTokenHelper(service.rootToken, io.env).catch(() => '');
    io.out(
      [
        'WARNING! dev mode is enabled! In this mode, the secrets server runs entirely in-memory and starts unsealed with a single unseal key. The root token is already authenticated to the CLI, so you can immediately begin using it.',
        '',
        'You may need to set the following environment variables:',
        '',
        `    $ export SECRETS_ADDR='${service.url}'`,
        `    $ export VAULT_ADDR='${service.url}'`,
        '',
        'The unseal key and root token are displayed below in case you want to seal/unseal the server or re-authenticate.',
        '',
        `Unseal Key: ${service.unsealKey}`,
        `Root Token: ${service.rootToken}`,
        '',
        stored ? `The root token is stored in the token helper file ${stored.replace(homedir(), '~')}.` : '',
        '',
        'Development mode should NOT be used in production installations!',
        '',
        `==> Secrets server started! Listening on ${service.url}`,
        '',
      ].join('\n'),
    );
    return;
  }
  const service = await startService(config!, logger);
  closeOnSignal(() => service.close());
  const status = await service.core.sealStatus();
  io.out(
    [
      '==> Secrets server configuration:',
      '',
      `             Storage: ${config!.storageType}`,
      `            Listener: ${service.url}`,
      `             Version: ${status.version}`,
      `         Initialized: ${status.initialized}`,
      `              Sealed: ${status.sealed}`,
      '',
      `==> Secrets server started! Listening on ${service.url}`,
      status.initialized ? 'Unseal it with `portcullis secrets operator unseal` (threshold: ' + status.t + ').' : 'Initialise it with `portcullis secrets operator init`.',
      '',
    ].join('\n'),
  );
}

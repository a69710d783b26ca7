/**
 * Running the secrets service: storage + core + HTTP server, from a configuration or in dev mode.
 * Used by `portcullis secrets server`, by `portcullis up`, and by tests and embedders.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from '../common/log.js';
import { StartupError } from '../common/errors.js';
import { openStorage, type Storage } from '../storage/index.js';
import type { ServerConfig } from './config.js';
import { Core } from './core.js';
import { startSecretsServer, type RunningSecretsServer } from './http/server.js';

export interface SecretsService {
  readonly core: Core;
  readonly http: RunningSecretsServer;
  readonly url: string;
  readonly storage: Storage;
  close(): Promise<void>;
}

export interface DevOptions {
  /** A fixed root token (e.g. `root`); default: a random `hvs.` token. */
  readonly rootTokenId?: string;
  /** Mount `secret/` as KV version 1 instead of 2. */
  readonly kvV1?: boolean;
}

export async function startService(config: ServerConfig, logger: Logger): Promise<SecretsService> {
  let storage: Storage;
  try {
    storage = await openStorage(config.storageUrl);
  } catch (error) {
    throw new StartupError(`secrets storage ${config.storageUrl}: ${(error as Error).message}`, { cause: error });
  }
  const core = new Core({
    storage,
    logger,
    storageType: config.storageType,
    defaultLeaseTtl: config.defaultLeaseTtl,
    maxLeaseTtl: config.maxLeaseTtl,
    strictVault: config.strictVault,
  });
  let tls: { cert: Buffer; key: Buffer } | undefined;
  if (config.listener.tlsCertFile && config.listener.tlsKeyFile) {
    try {
      tls = { cert: await readFile(config.listener.tlsCertFile), key: await readFile(config.listener.tlsKeyFile) };
    } catch (error) {
      await storage.close();
      throw new StartupError(`cannot read TLS files: ${(error as Error).message}`);
    }
  }
  let http: RunningSecretsServer;
  try {
    http = await startSecretsServer({ core, logger, host: config.listener.host, port: config.listener.port, tls, maxRequestSize: config.maxRequestSize });
  } catch (error) {
    await storage.close();
    throw error;
  }
  return {
    core,
    http,
    url: http.url,
    storage,
    close: async () => {
      await http.close();
      await core.close();
      await storage.close();
    },
  };
}

/** Dev mode: in memory, initialised with one key share, unsealed, `secret/` mounted. */
export async function startDevService(listen: { host: string; port: number }, dev: DevOptions, logger: Logger, strictVault = false): Promise<SecretsService & { rootToken: string; unsealKey: string }> {
  const service = await startService({ storageUrl: 'memory:', storageType: 'inmem', listener: listen, strictVault }, logger);
  const { rootToken, unsealKey } = await service.core.initDev(dev.rootTokenId);
  await service.core.state.mount('secret', 'secret', { type: 'kv', description: 'key/value secret storage', options: { version: dev.kvV1 ? '1' : '2' } });
  return { ...service, rootToken, unsealKey };
}

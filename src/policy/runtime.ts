/**
 * The policy engine process: configuration, the store (optionally persisted), the files and
 * bundles named on the command line (reloaded on change with `-w`), decision logs, metrics and the
 * HTTP API, started together and stopped together.
 */
import { randomUUID } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { StartupError } from '../common/errors.js';
import { createHttpServer, listen, type FastifyInstance } from '../common/http.js';
import { createLogger, type Logger } from '../common/log.js';
import { registerApi } from './api.js';
import { resolveConfig, type ConfigObject } from './config.js';
import { DecisionLogger } from './decision-log.js';
import { ApiError, errorResponse } from './errors.js';
import { FileJournal } from './journal.js';
import { loadPaths, splitPrefix } from './loader.js';
import { ServerMetrics } from './metrics.js';
import { PolicyStore, type StoreJournal } from './store.js';
import type { JsonObject } from './data-tree.js';

export interface EngineOptions {
  readonly address: { readonly host: string; readonly port: number };
  /** Policy and data files, directories, or (with `bundleMode`) bundles. */
  readonly paths?: readonly string[];
  readonly bundleMode?: boolean;
  readonly watch?: boolean;
  readonly ignore?: readonly string[];
  /** OPA configuration keys (config file overlaid with `--set`). */
  readonly config?: ConfigObject;
  readonly regoVersion?: 'v0' | 'v1';
  readonly authentication?: 'token' | 'off';
  readonly authorization?: 'basic' | 'off';
  /** A logger to use, or how to make one. */
  readonly logger?: Logger;
  readonly log?: { readonly level: string; readonly format: 'text' | 'json' | 'json-pretty' };
  /** HTTPS: PEM files, or PEM text. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string } | { readonly cert: string; readonly key: string };
  /** Keep policies and data in this directory so that a restart finds them again. */
  readonly persistDir?: string;
  /**
   * More listeners serving the same API over the same store (OPA takes several `--addr`), each with
   * its own TLS: `portcullis up` serves plain HTTP for people and HTTPS for the admission webhook.
   */
  readonly additionalListeners?: ReadonlyArray<{ readonly address: { readonly host: string; readonly port: number }; readonly tls?: { readonly cert: string; readonly key: string } }>;
  /** Where console decision logs go (default: standard error, as OPA's logger writes). */
  readonly decisionLogStream?: NodeJS.WritableStream;
}

export interface PolicyEngine {
  readonly url: string;
  readonly port: number;
  /** The addresses of `additionalListeners`, in order. */
  readonly additional: ReadonlyArray<{ readonly url: string; readonly port: number }>;
  readonly store: PolicyStore;
  readonly server: FastifyInstance;
  close(): Promise<void>;
}

const VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

export async function startPolicyEngine(options: EngineOptions): Promise<PolicyEngine> {
  const logger = options.logger ?? createLogger({ level: logLevel(options.log?.level), format: options.log?.format === 'text' ? 'text' : 'json', name: 'policy' });
  const rawConfig = options.config ?? {};
  const config = resolveConfig(rawConfig);
  const regoVersion = options.regoVersion ?? 'v1';

  let journal: StoreJournal | undefined;
  let initial: { policies: { id: string; raw: string }[]; data: JsonObject } | undefined;
  if (options.persistDir) {
    const opened = await FileJournal.open(options.persistDir);
    journal = opened.journal;
    initial = { policies: opened.policies, data: opened.data };
  }
  let store: PolicyStore;
  try {
    store = new PolicyStore({ regoVersion, journal, initial });
  } catch (error) {
    throw new StartupError(`stored policies in ${options.persistDir} do not compile: ${describe(error)}`);
  }

  const paths = options.paths ?? [];
  const loadOptions = { bundleMode: options.bundleMode ?? false, ignore: options.ignore ?? [] };
  if (paths.length > 0) {
    const loaded = await loadPaths(paths, loadOptions);
    await store.load(loaded, loaded.bundles).catch((error) => {
      throw new StartupError(`loading ${paths.join(', ')}: ${describe(error)}`);
    });
  }

  const tls = options.tls && 'certFile' in options.tls ? { cert: await readPem(options.tls.certFile), key: await readPem(options.tls.keyFile) } : options.tls;
  const instanceId = randomUUID();
  const api = {
    store,
    config,
    rawConfig,
    version: VERSION,
    instanceId,
    metrics: new ServerMetrics(),
    decisionLog: config.decisionLogsConsole ? new DecisionLogger(options.decisionLogStream ?? process.stderr, { ...config.labels, id: instanceId, version: VERSION }) : undefined,
    authentication: options.authentication ?? 'off',
    authorization: options.authorization ?? 'off',
  } as const;
  const serve = (listenerTls: typeof tls) => {
    const instance = createHttpServer({ logger, bodyLimit: config.maxBodyBytes, tls: listenerTls, errorResponse });
    registerApi(instance, api);
    return instance;
  };
  const server = serve(tls);
  const extra = (options.additionalListeners ?? []).map((listener) => ({ listener, server: serve(listener.tls) }));

  const watchers: FSWatcher[] = options.watch && paths.length > 0 ? watchPaths(paths, logger, async () => {
    const loaded = await loadPaths(paths, loadOptions);
    await store.load(loaded, loaded.bundles);
  }) : [];

  const closeAll = async () => {
    for (const watcher of watchers) watcher.close();
    await Promise.all([server, ...extra.map((e) => e.server)].map((s) => s.close()));
  };
  let where: Awaited<ReturnType<typeof listen>>;
  const additional: Array<{ url: string; port: number }> = [];
  try {
    where = await listen(server, options.address);
    for (const { listener, server: instance } of extra) additional.push(await listen(instance, listener.address));
  } catch (error) {
    await closeAll();
    throw error;
  }
  logger.info({ addr: [where.url, ...additional.map((a) => a.url)] }, 'policy engine serving the OPA REST API');
  return {
    url: where.url,
    port: where.port,
    additional,
    store,
    server,
    close: closeAll,
  };
}

/** Reload after changes settle (100 ms); a reload that fails is logged and the old state kept. */
function watchPaths(paths: readonly string[], logger: Logger, reload: () => Promise<void>): FSWatcher[] {
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = running.then(async () => {
        try {
          await reload();
          logger.info('reloaded policies and data after a file change');
        } catch (error) {
          logger.error({ error: describe(error) }, 'reload failed; keeping the previous policies and data');
        }
      });
    }, 100);
    timer.unref();
  };
  return paths.map((p) => {
    const watcher = watch(splitPrefix(p).file, { recursive: true }, schedule);
    watcher.unref();
    return watcher;
  });
}

async function readPem(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new StartupError(`${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function describe(error: unknown): string {
  if (error instanceof ApiError) {
    const details = (error.errors ?? []).map((e) => (e.location ? `${e.location.file}:${e.location.row}:${e.location.col}: ${e.code}: ${e.message}` : `${e.code}: ${e.message}`));
    return [error.message, ...details].join('; ');
  }
  return error instanceof Error ? error.message : String(error);
}

/** OPA's levels (debug, info, error) onto pino's. */
function logLevel(level: string | undefined): string {
  return level === 'error' ? 'error' : level === 'debug' ? 'debug' : 'info';
}

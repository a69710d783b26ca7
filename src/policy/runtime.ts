/**
 * The policy engine process: configuration, the store, loaded files and bundles, and the HTTP API,
 * started together and stopped together.
 */
import { createHttpServer, listen } from '../common/http.js';
import { createLogger, type Logger } from '../common/log.js';
import { resolveConfig, type ConfigObject } from './config.js';

export interface EngineOptions {
  readonly address: { readonly host: string; readonly port: number };
  readonly paths?: readonly string[];
  readonly bundleMode?: boolean;
  readonly watch?: boolean;
  readonly ignore?: readonly string[];
  readonly config?: ConfigObject;
  readonly regoVersion?: 'v0' | 'v1';
  readonly authentication?: 'token' | 'off';
  readonly authorization?: 'basic' | 'off';
  /** A logger to use, or how to make one. */
  readonly logger?: Logger;
  readonly log?: { readonly level: string; readonly format: 'text' | 'json' | 'json-pretty' };
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
  /** Keep policies and data in this directory so that a restart finds them again. */
  readonly persistDir?: string;
}

export interface PolicyEngine {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function startPolicyEngine(options: EngineOptions): Promise<PolicyEngine> {
  const logger = options.logger ?? createLogger({ level: options.log?.level ?? 'info', format: options.log?.format === 'text' ? 'text' : 'json' });
  const config = resolveConfig(options.config ?? {});
  const server = createHttpServer({
    logger,
    bodyLimit: config.maxBodyBytes,
    errorResponse: (error) => ({ statusCode: 500, body: { code: 'internal_error', message: String(error) } }),
  });
  server.get('/health', async () => ({}));
  const where = await listen(server, options.address);
  return { url: where.url, port: where.port, close: () => server.close() };
}

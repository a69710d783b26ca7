/**
 * A real secrets server on 127.0.0.1 (port 0) for the auth-method end-to-end tests: in-memory
 * storage, initialised and unsealed like `-dev`, with a known root token; plus a node-vault client
 * factory and a raw fetch helper for exact status/body assertions.
 */
import nodeVault from 'node-vault';
import { silentLogger } from '../../../src/common/log.js';
import { MemoryStorage } from '../../../src/storage/index.js';
import { Core } from '../../../src/secrets/core.js';
import { startSecretsServer } from '../../../src/secrets/http/server.js';

export interface TestServer {
  readonly url: string;
  readonly rootToken: string;
  readonly core: Core;
  /** A node-vault client at this server (root token unless another is given). */
  vault(token?: string): nodeVault.client;
  /** A raw request: exact status and parsed body. */
  request(method: string, path: string, options?: { token?: string; body?: unknown }): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startTestServer(): Promise<TestServer> {
  const core = new Core({ storage: new MemoryStorage(), logger: silentLogger(), storageType: 'inmem' });
  const { rootToken } = await core.initDev('root-token-for-tests');
  const server = await startSecretsServer({ core, logger: silentLogger(), host: '127.0.0.1', port: 0 });
  return {
    url: server.url,
    rootToken,
    core,
    vault: (token = rootToken) => nodeVault({ endpoint: server.url, token, apiVersion: 'v1' }),
    async request(method, path, options = {}) {
      const headers: Record<string, string> = {};
      if (options.token) headers['X-Vault-Token'] = options.token;
      if (options.body !== undefined) headers['Content-Type'] = 'application/json';
      const response = await fetch(`${server.url}/v1/${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
    },
    async close() {
      await server.close();
      await core.close();
    },
  };
}

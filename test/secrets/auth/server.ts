/**
 * The auth-method end-to-end tests' view of a real secrets server: the secrets tests' dev server
 * (test/secrets/helpers.ts: in memory, unsealed, root token `root`, on 127.0.0.1 port 0) with a
 * node-vault client factory and a raw request helper for exact status/body assertions.
 */
import type nodeVault from 'node-vault';
import { devServer, http, vault } from '../helpers.js';

export interface TestServer {
  readonly url: string;
  readonly rootToken: string;
  /** A node-vault client at this server (root token unless another is given; '' for none). */
  vault(token?: string): nodeVault.client;
  /** A raw request: exact status and parsed body (`body` may be a string, sent as is). */
  request(method: string, path: string, options?: { token?: string; body?: unknown }): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startTestServer(): Promise<TestServer> {
  const service = await devServer();
  return {
    url: service.url,
    rootToken: service.rootToken,
    vault: (token = service.rootToken) => vault(service.url, token),
    async request(method, path, options = {}) {
      const { status, body } = await http(service.url, method, path, {
        token: options.token,
        ...(typeof options.body === 'string' ? { raw: options.body } : { body: options.body }),
      });
      return { status, body };
    },
    close: () => service.close(),
  };
}

/**
 * Shared test fixtures for the secrets service: a dev server (in memory, unsealed, `secret/` KV v2,
 * root token `root`) and a server on SQLite, both on 127.0.0.1 port 0, and real clients.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import nodeVault from 'node-vault';
import { silentLogger } from '../../src/common/log.js';
import { startDevService, startService, type SecretsService } from '../../src/secrets/server.js';

export const ROOT = 'root';

export async function devServer(options: { strictVault?: boolean; kvV1?: boolean } = {}): Promise<SecretsService & { rootToken: string }> {
  return startDevService({ host: '127.0.0.1', port: 0 }, { rootTokenId: ROOT, kvV1: options.kvV1 }, silentLogger(), options.strictVault ?? false);
}

export function tempDir(prefix = 'secrets-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

/** A server on a SQLite file (sealed and, on first start, uninitialised). */
export async function sqliteServer(file: string): Promise<SecretsService> {
  return startService({ storageUrl: `sqlite:${file}`, storageType: 'sqlite', listener: { host: '127.0.0.1', port: 0 }, strictVault: false }, silentLogger());
}

export function vault(url: string, token?: string): nodeVault.client {
  return nodeVault({ apiVersion: 'v1', endpoint: url, token });
}

/** Plain HTTP for assertions on exact status and body. */
export async function http(url: string, method: string, apiPath: string, options: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any; text: string }> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers['X-Vault-Token'] = options.token;
  let payload: string | undefined = options.raw;
  if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const response = await fetch(`${url}/v1/${apiPath}`, { method, headers, body: payload });
  const text = await response.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

/**
 * The CLI's HTTP client for the Vault API: address and token from flags or the environment
 * (`SECRETS_ADDR`/`VAULT_ADDR`, `SECRETS_TOKEN`/`VAULT_TOKEN`, then the token helper file), TLS
 * options, and Vault's error bodies turned into `ApiError`.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { CommandError } from '../../common/errors.js';

export class ApiError extends CommandError {
  constructor(
    readonly status: number,
    readonly errors: readonly string[],
    readonly url: string,
    readonly method: string,
    readonly body?: unknown,
  ) {
    super(`Error making API request. URL: ${method} ${url} Code: ${status}. Errors: ${errors.length ? errors.map((e) => `* ${e.trim().replace(/\s*\n\s*/g, ' ')}`).join(' ') : '(none)'}`, 2);
    this.name = 'ApiError';
  }
}

export interface ClientOptions {
  readonly address: string;
  readonly token?: string;
  readonly caCert?: string;
  readonly skipVerify?: boolean;
}

export interface ApiResponse {
  readonly status: number;
  readonly body: Record<string, unknown> | undefined;
}

/** Where `login` stores the token: `SECRETS_TOKEN_FILE`, else `~/.portcullis-secrets-token`. */
export function tokenHelperPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.SECRETS_TOKEN_FILE || path.join(env.HOME || homedir(), '.portcullis-secrets-token');
}

export async function readTokenHelper(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  try {
    const text = (await readFile(tokenHelperPath(env), 'utf8')).trim();
    return text || undefined;
  } catch {
    return undefined;
  }
}

export async function writeTokenHelper(token: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const file = tokenHelperPath(env);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, token, { mode: 0o600 });
  await chmod(file, 0o600);
  return file;
}

export class Client {
  constructor(readonly options: ClientOptions) {}

  get token(): string | undefined {
    return this.options.token;
  }

  withToken(token: string | undefined): Client {
    return new Client({ ...this.options, token });
  }

  async request(method: string, apiPath: string, body?: unknown, query?: Record<string, string>): Promise<ApiResponse> {
    const url = new URL(`${this.options.address.replace(/\/+$/, '')}/v1/${apiPath.replace(/^\/+/, '')}`);
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { 'X-Vault-Request': 'true' };
    if (this.options.token) headers['X-Vault-Token'] = this.options.token;
    if (payload) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const secure = url.protocol === 'https:';
    const send = secure ? httpsRequest : httpRequest;
    const result = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = send(
        url,
        {
          method,
          headers,
          ...(secure ? { rejectUnauthorized: !this.options.skipVerify, ...(this.options.caCert ? { ca: readFileSync(this.options.caCert) } : {}) } : {}),
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          res.on('error', reject);
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) =>
        reject(new CommandError(`Error making API request to ${url.origin}: ${error.code === 'ECONNREFUSED' ? 'connection refused (is the server running? set SECRETS_ADDR or -address)' : error.message}`, 2)),
      );
      req.end(payload);
    });
    let parsed: Record<string, unknown> | undefined;
    if (result.text.trim()) {
      try {
        parsed = JSON.parse(result.text) as Record<string, unknown>;
      } catch {
        parsed = { errors: [result.text.trim()] };
      }
    }
    if (result.status >= 400) {
      const errors = Array.isArray(parsed?.errors) ? (parsed!.errors as string[]) : Array.isArray(parsed?.warnings) ? (parsed!.warnings as string[]) : [];
      throw new ApiError(result.status, errors, url.toString(), method, parsed);
    }
    return { status: result.status, body: parsed };
  }

  read(apiPath: string, query?: Record<string, string>) {
    return this.request('GET', apiPath, undefined, query);
  }
  write(apiPath: string, body: unknown) {
    return this.request('PUT', apiPath, body ?? {});
  }
  delete(apiPath: string) {
    return this.request('DELETE', apiPath);
  }
  list(apiPath: string) {
    return this.request('GET', apiPath, undefined, { list: 'true' });
  }
}

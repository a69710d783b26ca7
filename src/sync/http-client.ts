/** HTTP(S) transport shared by the sidecar's two clients (API server, policy engine). */
import http from 'node:http';
import https from 'node:https';
import { URL } from 'node:url';

export interface TransportOptions {
  readonly baseUrl: string;
  readonly ca?: string;
  readonly clientCert?: string;
  readonly clientKey?: string;
  readonly insecureSkipTlsVerify?: boolean;
  /** The whole Authorization header value (`Bearer …`, `Basic …`). */
  readonly authorization?: string;
  readonly userAgent?: string;
  readonly timeoutMs?: number;
}

export interface RequestOptions {
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  readonly contentType?: string;
}

export interface Response {
  readonly status: number;
  readonly body: Buffer;
}

export class Transport {
  private readonly agent: http.Agent;
  readonly base: URL;

  constructor(private readonly options: TransportOptions) {
    this.base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : options.baseUrl + '/');
    this.agent =
      this.base.protocol === 'https:'
        ? new https.Agent({
            keepAlive: true,
            ca: options.ca,
            cert: options.clientCert,
            key: options.clientKey,
            rejectUnauthorized: !options.insecureSkipTlsVerify,
          })
        : new http.Agent({ keepAlive: true });
  }

  /** A request whose whole answer is read; rejects only when there is no answer (network, timeout). */
  request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    return new Promise((resolve, reject) => {
      const request = this.open(method, path, options, (response) => {
        collect(response).then((body) => resolve({ status: response.statusCode ?? 0, body }), reject);
      });
      request.on('error', reject);
      const timeoutMs = this.options.timeoutMs ?? 30_000;
      request.setTimeout(timeoutMs, () => request.destroy(new Error(`${method} ${this.url(path)}: no answer within ${timeoutMs} ms`)));
      request.end(options.body);
    });
  }

  /** A request whose answer the caller streams (watch). */
  open(method: string, path: string, options: RequestOptions, onResponse: (response: http.IncomingMessage) => void): http.ClientRequest {
    const url = this.url(path);
    for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.options.userAgent ?? 'portcullis-sync' };
    if (this.options.authorization) headers.authorization = this.options.authorization;
    if (options.contentType) headers['content-type'] = options.contentType;
    return (url.protocol === 'https:' ? https : http).request(url, { method, headers, agent: this.agent }, onResponse);
  }

  close(): void {
    this.agent.destroy();
  }

  /** `path` is relative to the base URL's path (a leading slash is ignored). */
  private url(path: string): URL {
    return new URL(path.replace(/^\/+/, ''), this.base);
  }
}

export function collect(stream: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

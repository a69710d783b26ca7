/** One HTTPS request to a test cluster, verifying the server against the cluster CA. */
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  json(): any;
}

export interface RequestOptions {
  token?: string;
  basic?: [string, string];
  cert?: { cert: string; key: string };
  /** Arrays go out as repeated header lines (Impersonate-Group, G8). */
  headers?: Record<string, string | string[]>;
  body?: unknown;
}

export function send(cluster: { url: string; ca: string }, method: string, path: string, options: RequestOptions = {}): Promise<Answer> {
  const headers: Record<string, string | string[]> = { ...(options.headers ?? {}) };
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  if (options.basic) headers['authorization'] = `Basic ${Buffer.from(options.basic.join(':')).toString('base64')}`;
  const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
  if (payload) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, cluster.url), { method, headers, ca: cluster.ca, ...(options.cert ?? {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

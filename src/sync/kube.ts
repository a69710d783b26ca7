/**
 * A small client for the Kubernetes API calls the sidecar makes: paged list, watch (one JSON
 * event per line), and JSON merge patch. Credentials come from a kubeconfig (ClusterConnection).
 */
import { collect, Transport, type RequestOptions } from './http-client.js';
import type { ClusterConnection } from './kubeconfig.js';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject & { code?: number; reason?: string; message?: string };
}

/** A non-2xx answer of the API server; `reason` and `message` come from its Status body when it sent one. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

export interface WatchHandle {
  close(): void;
}

export class KubeClient {
  private readonly transport: Transport;

  constructor(connection: ClusterConnection) {
    const authorization = connection.token
      ? `Bearer ${connection.token}`
      : connection.username !== undefined
        ? `Basic ${Buffer.from(`${connection.username}:${connection.password ?? ''}`).toString('base64')}`
        : undefined;
    this.transport = new Transport({
      baseUrl: connection.server,
      ca: connection.ca,
      clientCert: connection.clientCert,
      clientKey: connection.clientKey,
      insecureSkipTlsVerify: connection.insecureSkipTlsVerify,
      authorization,
    });
  }

  /** Every item under `path` (following `continue`), with the list's resourceVersion. Items get the list's apiVersion and kind. */
  async list(path: string): Promise<{ items: KubeObject[]; resourceVersion: string }> {
    const items: KubeObject[] = [];
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      const page = (await this.json('GET', path, { query: { limit: '500', ...(continueToken ? { continue: continueToken } : {}) } })) as {
        apiVersion?: string;
        kind?: string;
        items?: KubeObject[];
        metadata?: { resourceVersion?: string; continue?: string };
      };
      const kind = page.kind?.replace(/List$/, '');
      for (const item of page.items ?? []) items.push({ apiVersion: page.apiVersion, kind, ...item });
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken);
    return { items, resourceVersion };
  }

  async mergePatch(path: string, patch: unknown): Promise<KubeObject> {
    return (await this.json('PATCH', path, { body: JSON.stringify(patch), contentType: 'application/merge-patch+json' })) as KubeObject;
  }

  /** Server-side apply (creates or updates; idempotent), owning the fields as `fieldManager`. */
  async apply(path: string, object: KubeObject, fieldManager: string): Promise<KubeObject> {
    const query = { fieldManager, force: 'true' };
    return (await this.json('PATCH', path, { query, body: JSON.stringify(object), contentType: 'application/apply-patch+yaml' })) as KubeObject;
  }

  /**
   * Stream watch events from `resourceVersion` on. `onEnd` is called once when the stream ends:
   * without an error when the server closed it normally (timeout), with one otherwise.
   */
  watch(path: string, resourceVersion: string, timeoutSeconds: number, onEvent: (event: WatchEvent) => void, onEnd: (error?: Error) => void): WatchHandle {
    let ended = false;
    const end = (error?: Error) => {
      if (ended) return;
      ended = true;
      onEnd(error);
    };
    const query = { watch: '1', resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: String(timeoutSeconds) };
    const request = this.transport.open('GET', path, { query }, (response) => {
      if ((response.statusCode ?? 0) >= 300) {
        collect(response).then((body) => end(apiError(response.statusCode ?? 0, body)), end);
        return;
      }
      response.setEncoding('utf8');
      let buffered = '';
      response.on('data', (chunk: string) => {
        buffered += chunk;
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (!line) continue;
          let event: WatchEvent;
          try {
            event = JSON.parse(line) as WatchEvent;
          } catch (error) {
            request.destroy();
            end(error as Error);
            return;
          }
          onEvent(event);
        }
      });
      response.on('end', () => end());
      response.on('error', end);
      response.on('aborted', () => end(new Error('watch connection aborted')));
    });
    request.on('error', end);
    request.end();
    return {
      close: () => {
        ended = true;
        request.destroy();
      },
    };
  }

  close(): void {
    this.transport.close();
  }

  private async json(method: string, path: string, options: RequestOptions): Promise<unknown> {
    const { status, body } = await this.transport.request(method, path, options);
    if (status >= 300) throw apiError(status, body);
    try {
      return JSON.parse(body.toString('utf8'));
    } catch {
      throw new KubeApiError(status, 'InvalidResponse', `${method} ${path}: the server did not answer JSON`);
    }
  }
}

function apiError(status: number, body: Buffer): KubeApiError {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { reason?: string; message?: string };
    return new KubeApiError(status, parsed.reason ?? 'Unknown', parsed.message ?? `HTTP ${status}`);
  } catch {
    return new KubeApiError(status, 'Unknown', `HTTP ${status}: ${body.toString('utf8').slice(0, 200)}`);
  }
}

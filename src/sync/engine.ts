/** The policy-engine calls the sidecar makes (OPA's REST API, as kube-mgmt uses it). */
import { Transport } from './http-client.js';

/** The engine refused a request; `error` is its OPA error object (or the raw text when it sent no JSON). */
export class EngineRequestError extends Error {
  constructor(
    readonly status: number,
    readonly error: unknown,
  ) {
    super(typeof error === 'object' && error && 'message' in error ? String((error as { message: unknown }).message) : `HTTP ${status}: ${String(error)}`);
    this.name = 'EngineRequestError';
  }
}

export interface EngineOptions {
  /** Base of the v1 API, e.g. `http://localhost:8181/v1` (kube-mgmt's --opa-url). */
  readonly url: string;
  readonly token?: string;
  readonly ca?: string;
}

export type JsonPatchOperation = { op: 'add' | 'remove' | 'replace'; path: string; value?: unknown };

export class PolicyEngine {
  private readonly transport: Transport;

  constructor(options: EngineOptions) {
    this.transport = new Transport({
      baseUrl: options.url,
      ca: options.ca,
      authorization: options.token ? `Bearer ${options.token}` : undefined,
    });
  }

  putPolicy(id: string, text: string): Promise<void> {
    return this.call('PUT', `policies/${encodePath(id.split('/'))}`, text);
  }

  /** Deleting a policy that is not there is not an error. */
  async deletePolicy(id: string): Promise<void> {
    await this.call('DELETE', `policies/${encodePath(id.split('/'))}`, undefined, [404]);
  }

  putData(path: readonly string[], value: unknown): Promise<void> {
    return this.call('PUT', `data/${encodePath(path)}`, JSON.stringify(value), [], 'application/json');
  }

  /** Apply a JSON Patch to the root of the data tree; removing what is not there is not an error. */
  async patchData(operations: readonly JsonPatchOperation[]): Promise<void> {
    await this.call('PATCH', 'data', JSON.stringify(operations), [404], 'application/json-patch+json');
  }

  close(): void {
    this.transport.close();
  }

  private async call(method: string, path: string, body?: string, tolerated: readonly number[] = [], contentType?: string): Promise<void> {
    const response = await this.transport.request(method, path, { body, contentType });
    if (response.status < 300 || tolerated.includes(response.status)) return;
    const text = response.body.toString('utf8');
    let error: unknown = text;
    try {
      error = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    throw new EngineRequestError(response.status, error);
  }
}

function encodePath(segments: readonly string[]): string {
  return segments.map(encodeURIComponent).join('/');
}

/** A JSON Pointer (RFC 6901) from path segments. */
export function jsonPointer(segments: readonly string[]): string {
  return '/' + segments.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

/**
 * Audit devices (`sys/audit`): every authenticated request and its response as one JSON line per
 * event. Tokens, accessors and every string value of request and response data are replaced by
 * `hmac-sha256:<hex>` under a salt kept behind the barrier, so the log can be searched for a known
 * value (`sys/audit-hash/<path>`) but never reveals one.
 */
import { createHmac } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { InvalidRequestError } from './errors.js';

export interface AuditDeviceEntry {
  path: string;
  type: string;
  description: string;
  options: Record<string, string>;
  local: boolean;
}

interface Device {
  readonly entry: AuditDeviceEntry;
  readonly write: (line: string) => void;
  readonly close: () => Promise<void>;
}

export interface AuditAuth {
  client_token?: string;
  accessor?: string;
  display_name?: string;
  policies?: readonly string[];
  token_policies?: readonly string[];
  metadata?: Record<string, string> | null;
  entity_id?: string;
  token_type?: string;
}

export interface AuditEvent {
  readonly id: string;
  readonly operation: string;
  readonly path: string;
  readonly mountType: string;
  readonly remoteAddress: string;
  readonly auth?: AuditAuth;
  readonly data?: Readonly<Record<string, unknown>>;
}

export class AuditBroker {
  private readonly devices = new Map<string, Device>();

  constructor(private readonly salt: Buffer) {}

  hash(value: string): string {
    return `hmac-sha256:${createHmac('sha256', this.salt).update(value, 'utf8').digest('hex')}`;
  }

  get enabled(): boolean {
    return this.devices.size > 0;
  }

  list(): AuditDeviceEntry[] {
    return [...this.devices.values()].map((d) => d.entry);
  }

  async enable(entry: AuditDeviceEntry): Promise<void> {
    if (this.devices.has(entry.path)) throw new InvalidRequestError(`path already in use`);
    if (entry.type !== 'file') throw new InvalidRequestError(`unknown backend type: "${entry.type}"`);
    if (entry.options.log_raw === 'true') throw new InvalidRequestError('log_raw is not supported: audit logs never hold secrets in clear');
    const filePath = entry.options.file_path ?? entry.options.path;
    if (!filePath) throw new InvalidRequestError('file_path is required');
    if (filePath === 'discard') {
      this.devices.set(entry.path, { entry, write: () => {}, close: async () => {} });
      return;
    }
    if (filePath === 'stdout') {
      this.devices.set(entry.path, { entry, write: (line) => process.stdout.write(line), close: async () => {} });
      return;
    }
    const mode = entry.options.mode ? parseInt(entry.options.mode, 8) : 0o600;
    const stream: WriteStream = createWriteStream(filePath, { flags: 'a', mode });
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', (error) => reject(new InvalidRequestError(`sanity check failed; unable to open "${filePath}" for writing: ${error.message}`)));
    });
    this.devices.set(entry.path, {
      entry,
      write: (line) => stream.write(line),
      close: () => new Promise<void>((resolve) => stream.end(resolve)),
    });
  }

  async disable(path: string): Promise<void> {
    const device = this.devices.get(path);
    this.devices.delete(path);
    await device?.close();
  }

  async close(): Promise<void> {
    for (const path of [...this.devices.keys()]) await this.disable(path);
  }

  logRequest(event: AuditEvent): void {
    if (!this.enabled) return;
    this.emit({ time: new Date().toISOString(), type: 'request', auth: this.hashAuth(event.auth), request: this.request(event) });
  }

  logResponse(event: AuditEvent, response: { data?: unknown; auth?: Record<string, unknown>; warnings?: readonly string[] } | undefined, error?: string): void {
    if (!this.enabled) return;
    const record: Record<string, unknown> = {
      time: new Date().toISOString(),
      type: 'response',
      auth: this.hashAuth(event.auth),
      request: this.request(event),
      response: {
        mount_type: event.mountType,
        ...(response?.auth ? { auth: this.hashAuth(response.auth as AuditAuth) } : {}),
        ...(response?.data !== undefined && response.data !== null ? { data: this.hashValues(response.data) } : {}),
        ...(response?.warnings?.length ? { warnings: response.warnings } : {}),
      },
    };
    if (error) record.error = error;
    this.emit(record);
  }

  private emit(record: Record<string, unknown>): void {
    const line = JSON.stringify(record) + '\n';
    for (const device of this.devices.values()) device.write(line);
  }

  private request(event: AuditEvent): Record<string, unknown> {
    return {
      id: event.id,
      operation: event.operation,
      mount_type: event.mountType,
      client_token: event.auth?.client_token ? this.hash(event.auth.client_token) : '',
      client_token_accessor: event.auth?.accessor ? this.hash(event.auth.accessor) : '',
      namespace: { id: 'root' },
      path: event.path,
      data: event.data && Object.keys(event.data).length ? this.hashValues(event.data) : null,
      remote_address: event.remoteAddress,
    };
  }

  private hashAuth(auth: AuditAuth | undefined): Record<string, unknown> | undefined {
    if (!auth) return undefined;
    const out: Record<string, unknown> = { ...auth };
    if (auth.client_token) out.client_token = this.hash(auth.client_token);
    if (auth.accessor) out.accessor = this.hash(auth.accessor);
    if (auth.metadata) out.metadata = auth.metadata;
    return out;
  }

  /** Every string inside `value` replaced by its HMAC. */
  hashValues(value: unknown): unknown {
    if (typeof value === 'string') return this.hash(value);
    if (Array.isArray(value)) return value.map((v) => this.hashValues(v));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, this.hashValues(v)]));
    }
    return value;
  }
}

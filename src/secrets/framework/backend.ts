/**
 * A backend is a declarative table of paths; one dispatcher serves them all.
 *
 * Each `PathDef` names a pattern (a regular expression over the path inside the mount, anchored at
 * both ends, whose named groups become fields), the fields it accepts with their types and
 * defaults, the operations it serves, an optional existence check (which decides whether a write
 * needs the `create` or the `update` capability), and help text. The dispatcher:
 *
 *   1. finds the first path whose pattern matches (none → 404 `unsupported path`),
 *   2. finds the operation's handler (none → 405 `unsupported operation`),
 *   3. converts every declared field (wrong type → 400) and notes undeclared ones (ignored, with
 *      Vault's warning `Endpoint ignored these unrecognized parameters: [...]`),
 *   4. calls the handler and returns its `Response` (undefined → 204 at the edge).
 *
 * `help` requests (`GET ?help=1`) are answered from the table itself.
 */
import { NotFoundError, UnsupportedOperationError } from '../errors.js';
import type { Auth, Operation, RenewRequest, Request, Response } from '../logical.js';
import { FieldData, type FieldSchemas } from './fields.js';

export type Handler = (request: Request, fields: FieldData) => Promise<Response | undefined>;

export interface PathDef {
  /** Regex source matched against the whole path inside the mount, e.g. `login/(?<username>[^/]+)`. */
  readonly pattern: string;
  readonly fields?: FieldSchemas;
  readonly operations: Partial<Record<Exclude<Operation, 'help'>, Handler>>;
  /**
   * Whether the item a create/update targets exists. When present, a write to a missing item
   * needs `create` and to an existing one `update`; when absent every write is an `update`.
   */
  readonly existenceCheck?: (request: Request, fields: FieldData) => Promise<boolean>;
  /** The body is free-form (KV data): undeclared fields are not warned about. */
  readonly takesArbitraryInput?: boolean;
  /** Served without a token (logins). */
  readonly unauthenticated?: boolean;
  /** Needs `sudo` on the path in addition to the operation's capability (Vault's root paths). */
  readonly sudo?: boolean;
  readonly synopsis?: string;
  readonly description?: string;
}

/** What the router needs from any backend, table-driven or not. */
export interface Backend {
  /** Serve one request (its `operation` already decided: create vs update from `existenceCheck`). */
  handleRequest(request: Request): Promise<Response | undefined>;
  /** For a write: does the target exist? `undefined` when the path has no existence check. */
  existenceCheck(request: Request): Promise<boolean | undefined>;
  /** Whether the path is served without a token (logins). */
  isUnauthenticated(path: string): boolean;
  /** Whether the path needs `sudo` as well. */
  isSudo(path: string): boolean;
  /**
   * Auth methods: re-check a login when its token is renewed (e.g. the user still exists and has
   * the same policies), returning the auth to keep (TTLs may change). Throw to refuse the renewal.
   * Absent: renewal only extends the TTL.
   */
  renew?(request: RenewRequest): Promise<Auth>;
  /** Release resources when the mount is disabled or the server stops. */
  close?(): Promise<void>;
}

interface CompiledPath {
  readonly def: PathDef;
  readonly regex: RegExp;
}

export interface FrameworkBackendOptions {
  readonly paths: readonly PathDef[];
  readonly help?: string;
  readonly renew?: (request: RenewRequest) => Promise<Auth>;
  readonly close?: () => Promise<void>;
}

export class FrameworkBackend implements Backend {
  private readonly compiled: readonly CompiledPath[];
  readonly renew?: (request: RenewRequest) => Promise<Auth>;
  readonly close?: () => Promise<void>;

  constructor(private readonly options: FrameworkBackendOptions) {
    this.compiled = options.paths.map((def) => ({ def, regex: new RegExp(`^(?:${def.pattern})$`) }));
    if (options.renew) this.renew = options.renew;
    if (options.close) this.close = options.close;
  }

  /** The matching path and its captured fields, or undefined. */
  route(path: string): { def: PathDef; captures: Record<string, string> } | undefined {
    for (const { def, regex } of this.compiled) {
      const m = regex.exec(path);
      if (m) {
        const captures: Record<string, string> = {};
        for (const [k, v] of Object.entries(m.groups ?? {})) if (v !== undefined) captures[k] = v;
        return { def, captures };
      }
    }
    return undefined;
  }

  isUnauthenticated(path: string): boolean {
    return this.route(path)?.def.unauthenticated === true;
  }

  isSudo(path: string): boolean {
    return this.route(path)?.def.sudo === true;
  }

  private fieldsFor(request: Request): { def: PathDef; fields: FieldData } {
    const match = this.route(request.path);
    if (!match) throw new NotFoundError('unsupported path', true);
    const data = { ...request.data, ...match.captures };
    return { def: match.def, fields: new FieldData(match.def.fields ?? {}, data) };
  }

  async existenceCheck(request: Request): Promise<boolean | undefined> {
    const match = this.route(request.path);
    if (!match?.def.existenceCheck) return undefined;
    const { def, fields } = this.fieldsFor(request);
    return def.existenceCheck!(request, fields);
  }

  async handleRequest(request: Request): Promise<Response | undefined> {
    if (request.operation === 'help') return this.help(request.path);
    const { def, fields } = this.fieldsFor(request);
    let handler = def.operations[request.operation];
    // Without an existence check Vault serves a create with the update handler and vice versa.
    if (!handler && request.operation === 'create') handler = def.operations.update;
    if (!handler && request.operation === 'update' && !def.existenceCheck) handler = def.operations.create;
    if (!handler) throw new UnsupportedOperationError();
    const response = await handler(request, fields);
    const ignored = def.takesArbitraryInput ? [] : fields.unknownFields();
    if (ignored.length === 0 || request.operation === 'read' || request.operation === 'list' || request.operation === 'delete') return response;
    const warning = `Endpoint ignored these unrecognized parameters: [${ignored.join(' ')}]`;
    if (!response) return { warnings: [warning] };
    if (response.raw) return response;
    return { ...response, warnings: [...(response.warnings ?? []), warning] };
  }

  private help(path: string): Response {
    const match = this.route(path);
    const def = match?.def;
    const lines = [this.options.help ?? ''];
    if (def) {
      lines.push(`## PATH ${def.pattern}`, def.synopsis ?? '', def.description ?? '', '## PARAMETERS');
      for (const [name, schema] of Object.entries(def.fields ?? {})) lines.push(`${name} (${schema.type})`, `    ${schema.description ?? ''}`);
    }
    return { data: { help: lines.join('\n').trim(), see_also: null } };
  }
}

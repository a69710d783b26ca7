/**
 * Kubernetes API errors. A `StatusError` *is* its wire body: the `Status` object kubectl and
 * client-node read (`reason` decides how kubectl prints it, `message` is shown verbatim). Every
 * failure of the API server reaches the client through `toStatus` (server.ts), in one place.
 *
 * Messages follow apimachinery's constructors byte for byte (kube.md §1, §3.6, §7.7).
 */

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout'
  | '';

export interface StatusCause {
  readonly reason?: string;
  readonly message: string;
  readonly field?: string;
}

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Failure' | 'Success';
  readonly message?: string;
  readonly reason?: StatusReason;
  readonly details?: StatusDetails;
  readonly code: number;
}

/** A group and plural resource, as errors name them: `pods`, `roles.rbac.authorization.k8s.io`. */
export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

export function qualifiedResource(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

/** A group and kind, as validation errors name them: `ConfigMap`, `Role.rbac.authorization.k8s.io`. */
export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StatusError';
  }

  get status(): Status {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

function details(gr: GroupResource, name?: string, extra?: Partial<StatusDetails>): StatusDetails {
  return {
    ...(name ? { name } : {}),
    ...(gr.group ? { group: gr.group } : {}),
    kind: gr.resource,
    ...extra,
  };
}

export function notFound(gr: GroupResource, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, details(gr, name));
}

export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, details(gr, name));
}

export function conflict(gr: GroupResource, name: string, why: string): StatusError {
  return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`, details(gr, name));
}

export const OBJECT_MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

/** 422 with one cause per field error: `Kind.group "name" is invalid: a` or `...: [a, b]`. */
export function invalid(gk: GroupKind, name: string, errors: readonly FieldError[]): StatusError {
  const qualified = gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
  const texts = errors.map(formatFieldError);
  const joined = texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
  return new StatusError(422, 'Invalid', `${qualified} "${name}" is invalid: ${joined}`, {
    ...(name ? { name } : {}),
    ...(gk.group ? { group: gk.group } : {}),
    kind: gk.kind,
    causes: errors.map((e) => ({ reason: FIELD_ERROR_REASONS[e.type], message: formatFieldError(e).slice(e.field.length + 2), field: e.field })),
  });
}

export function badRequest(message: string): StatusError {
  return new StatusError(400, 'BadRequest', message);
}

export function forbidden(gr: GroupResource | undefined, name: string, message: string): StatusError {
  if (!gr || gr.resource === '') return new StatusError(403, 'Forbidden', `forbidden: ${message}`);
  return new StatusError(403, 'Forbidden', `${qualifiedResource(gr)}${name ? ` "${name}"` : ''} is forbidden: ${message}`, details(gr, name));
}

export function unauthorized(): StatusError {
  return new StatusError(401, 'Unauthorized', 'Unauthorized');
}

export function methodNotSupported(gr: GroupResource, verb: string): StatusError {
  return new StatusError(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${qualifiedResource(gr)}"`, details(gr));
}

export function unsupportedMediaType(): StatusError {
  return new StatusError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf');
}

export function tooLarge(limit: number): StatusError {
  return new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
}

/** A watch or list from a revision that storage has compacted away. */
export function expired(message: string): StatusError {
  return new StatusError(410, 'Expired', message);
}

export function internalError(message: string, options?: { cause?: unknown }): StatusError {
  return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }, options);
}

export function serviceUnavailable(message: string): StatusError {
  return new StatusError(503, 'ServiceUnavailable', message);
}

/** A 404 for a path that names no resource the server serves (upstream's generic text). */
export function pathNotFound(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
}

// ---- field errors (apimachinery's field.Error) ----

export type FieldErrorType = 'Required' | 'Invalid' | 'Forbidden' | 'NotSupported' | 'Duplicate' | 'TooLong';

export interface FieldError {
  readonly type: FieldErrorType;
  readonly field: string;
  readonly value?: unknown;
  readonly detail?: string;
  /** For NotSupported: the allowed values. */
  readonly allowed?: readonly string[];
}

const FIELD_ERROR_REASONS: Record<FieldErrorType, string> = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  Forbidden: 'FieldValueForbidden',
  NotSupported: 'FieldValueNotSupported',
  Duplicate: 'FieldValueDuplicate',
  TooLong: 'FieldValueTooLong',
};

const FIELD_ERROR_TEXT: Record<FieldErrorType, string> = {
  Required: 'Required value',
  Invalid: 'Invalid value',
  Forbidden: 'Forbidden',
  NotSupported: 'Unsupported value',
  Duplicate: 'Duplicate value',
  TooLong: 'Too long',
};

export function formatFieldError(error: FieldError): string {
  const parts = [`${error.field}: ${FIELD_ERROR_TEXT[error.type]}`];
  if (error.type === 'Invalid' || error.type === 'NotSupported' || error.type === 'Duplicate') {
    parts[0] += `: ${formatValue(error.value)}`;
  }
  let text = parts[0]!;
  if (error.type === 'NotSupported' && error.allowed) {
    text += `: supported values: ${error.allowed.map((a) => `"${a}"`).join(', ')}`;
  } else if (error.detail) {
    text += `: ${error.detail}`;
  }
  return text;
}

function formatValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export const field = {
  required: (path: string, detail?: string): FieldError => ({ type: 'Required', field: path, ...(detail ? { detail } : {}) }),
  invalid: (path: string, value: unknown, detail?: string): FieldError => ({ type: 'Invalid', field: path, value, ...(detail ? { detail } : {}) }),
  forbidden: (path: string, detail: string): FieldError => ({ type: 'Forbidden', field: path, detail }),
  notSupported: (path: string, value: unknown, allowed: readonly string[]): FieldError => ({ type: 'NotSupported', field: path, value, allowed }),
  duplicate: (path: string, value: unknown): FieldError => ({ type: 'Duplicate', field: path, value }),
};

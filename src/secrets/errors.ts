/**
 * Errors of the secrets service. Each knows its HTTP status and the strings that go in Vault's
 * `{"errors": [...]}` body; the HTTP edge (http/respond.ts) is the only place that turns them into
 * bytes. Backends throw these (or return `Response` values) — never raw strings, never statuses.
 */
export class SecretsError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** The `errors` array of the wire body; `[]` for Vault's bare 404s. Defaults to `[message]`. */
    readonly errors: readonly string[] = [message],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SecretsError';
  }
}

/** 400 with the handler's message — Vault's `logical.ErrorResponse`. */
export class InvalidRequestError extends SecretsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(400, message, [message], options);
    this.name = 'InvalidRequestError';
  }
}

/** 403. Missing/unknown token: `permission denied`; ACL denial: Vault's multierror text. */
export class PermissionDeniedError extends SecretsError {
  constructor(readonly kind: 'token' | 'acl' = 'token', message = 'permission denied') {
    super(403, message, [kind === 'acl' ? multiError(message) : message]);
    this.name = 'PermissionDeniedError';
  }
}

/** 404. Without a message the body is `{"errors":[]}` as Vault sends for absent items and empty lists. */
export class NotFoundError extends SecretsError {
  constructor(message?: string, wrapped = false) {
    super(404, message ?? 'not found', message === undefined ? [] : [wrapped ? multiError(message) : message]);
    this.name = 'NotFoundError';
  }
}

/** A 404 answered with a whole envelope (`data: null`, the warning, no `errors`), as KV v2 does for invalid paths. */
export class WarningNotFoundError extends SecretsError {
  constructor(readonly warning: string) {
    super(404, warning, []);
    this.name = 'WarningNotFoundError';
  }
}

export class UnsupportedOperationError extends SecretsError {
  constructor() {
    super(405, 'unsupported operation', [multiError('unsupported operation')]);
    this.name = 'UnsupportedOperationError';
  }
}

export class SealedError extends SecretsError {
  constructor() {
    super(503, 'Vault is sealed');
    this.name = 'SealedError';
  }
}

/** The formatting of hashicorp/go-multierror with one error, which Vault puts on the wire verbatim. */
export function multiError(message: string): string {
  return `1 error occurred:\n\t* ${message}\n\n`;
}

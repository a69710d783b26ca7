/**
 * The errors of the policy engine's REST API, in OPA's wire shape: `{code, message, errors?}`
 * (OPA `server/types` ErrorV1), written indented with a trailing newline as OPA's writer does.
 * Every failure is typed where it arises and becomes a response in `errorResponse` alone.
 */
import { HttpError, type ErrorResponse } from '../common/http.js';
import { RegoError, RegoErrors } from '../rego/index.js';
import { StoreError } from './data-tree.js';

/** OPA's API error codes. */
export const Code = {
  internal: 'internal_error',
  evaluation: 'evaluation_error',
  unauthorized: 'unauthorized',
  invalidParameter: 'invalid_parameter',
  invalidOperation: 'invalid_operation',
  resourceNotFound: 'resource_not_found',
  resourceConflict: 'resource_conflict',
  undefinedDocument: 'undefined_document',
} as const;

/** OPA's fixed messages. */
export const Message = {
  compileModule: 'error(s) occurred while compiling module(s)',
  parseQuery: 'error(s) occurred while parsing query',
  compileQuery: 'error(s) occurred while compiling query',
  evaluation: 'error(s) occurred while evaluating query',
  unauthorizedUndefined: 'authorization policy missing or undefined',
  unauthorized: 'request rejected by administrative policy',
  undefined: 'document missing or undefined',
  missing: 'document missing',
  foundUndefined: 'document undefined',
  bodyTooLarge: 'request body too large',
  gzipTooLarge: 'compressed request body too large',
} as const;

/** One detailed error: a Rego parse/compile/evaluation error with its location. */
export interface ErrorDetail {
  readonly code: string;
  readonly message: string;
  readonly location?: { readonly file: string; readonly row: number; readonly col: number };
}

/** An error with its exact OPA response: status, code, message and details. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors?: readonly ErrorDetail[],
  ) {
    super(message);
    this.name = 'ApiError';
  }

  static badRequest(message: string, errors?: readonly ErrorDetail[]): ApiError {
    return new ApiError(400, Code.invalidParameter, message, errors);
  }

  /** A Rego parse/compile failure (`message` names the stage, e.g. compiling module(s)). */
  static rego(message: string, error: RegoErrors | RegoError, code: string = Code.invalidParameter): ApiError {
    const list = error instanceof RegoErrors ? error.errors : [error];
    return new ApiError(400, code, message, list.map(detail));
  }
}

export function detail(error: RegoError): ErrorDetail {
  const location = error.location ? { file: error.location.file, row: error.location.row, col: error.location.col } : undefined;
  // RegoError.message is OPA's `file:row: code: text`; the wire carries the bare text.
  const message = (error as { text?: string }).text ?? error.message;
  return location ? { code: error.code, message, location } : { code: error.code, message };
}

/** Encode an error body as OPA does: two-space indentation and a newline. */
export function errorBody(code: string, message: string, errors?: readonly ErrorDetail[]): string {
  const body = errors && errors.length > 0 ? { code, message, errors } : { code, message };
  return JSON.stringify(body, null, 2) + '\n';
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/** The one translation of every error the policy server can meet into OPA's response. */
export function errorResponse(error: unknown): ErrorResponse {
  const shape = (status: number, code: string, message: string, errors?: readonly ErrorDetail[]): ErrorResponse => ({
    statusCode: status,
    body: Buffer.from(errorBody(code, message, errors)),
    headers: JSON_HEADERS,
  });
  if (error instanceof ApiError) return shape(error.status, error.code, error.message, error.errors);
  if (error instanceof StoreError) {
    const status = error.kind === 'invalid_patch' ? 400 : 404;
    const code = error.kind === 'not_found' ? Code.resourceNotFound : error.kind === 'write_conflict' ? Code.resourceConflict : Code.invalidParameter;
    return shape(status, code, error.message);
  }
  if (error instanceof RegoErrors) return shape(400, Code.invalidParameter, Message.compileModule, error.errors.map(detail));
  if (error instanceof RegoError) return shape(500, Code.internal, Message.evaluation, [detail(error)]);
  if (error instanceof HttpError) {
    // OPA answers an oversized body with 400, not 413 (server/handlers/decoding.go).
    if (error.statusCode === 413) return shape(400, Code.invalidParameter, Message.bodyTooLarge);
    // Unknown paths and wrong methods get Go's plain answers, as OPA's router gives them.
    if (error.statusCode === 404) return { statusCode: 404, body: Buffer.from('404 page not found\n'), headers: { 'content-type': 'text/plain; charset=utf-8' } };
    if (error.statusCode === 405) return { statusCode: 405, body: '' };
    return shape(error.statusCode, error.statusCode >= 500 ? Code.internal : Code.invalidParameter, error.message);
  }
  return shape(500, Code.internal, error instanceof Error ? error.message : String(error));
}

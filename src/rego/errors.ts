import type { Location } from './syntax/ast.js';

export type RegoErrorCode =
  | 'rego_parse_error'
  | 'rego_compile_error'
  | 'rego_type_error'
  | 'rego_unsafe_var_error'
  | 'rego_recursion_error'
  | 'eval_conflict_error'
  | 'eval_builtin_error'
  | 'eval_type_error'
  | 'eval_cancel_error'
  | 'eval_internal_error';

/**
 * One Rego error with OPA's code. `message` is formatted as OPA's `Error()` does:
 * `<file>:<row>: <code>: <text>` when a location is known, `<code>: <text>` otherwise;
 * `text` is the bare message.
 */
export class RegoError extends Error {
  readonly code: RegoErrorCode | string;
  readonly location?: Location;
  readonly text: string;

  constructor(code: RegoErrorCode | string, text: string, location?: Location) {
    super(location ? `${location.file}:${location.row}: ${code}: ${text}` : `${code}: ${text}`);
    this.name = 'RegoError';
    this.code = code;
    this.text = text;
    if (location) this.location = { file: location.file, row: location.row, col: location.col };
  }

  toJSON(): { code: string; message: string; location?: Location } {
    return { code: this.code, message: this.text, ...(this.location ? { location: this.location } : {}) };
  }
}

/** Every error found by parsing or compiling a set of modules, reported at once. */
export class RegoErrors extends Error {
  readonly errors: RegoError[];

  constructor(errors: RegoError[]) {
    const head = errors.length === 1 ? '1 error occurred' : `${errors.length} errors occurred`;
    super(`${head}:\n${errors.map((e) => e.message).join('\n')}`);
    this.name = 'RegoErrors';
    this.errors = errors;
  }

  get code(): string {
    return this.errors[0]?.code ?? 'rego_compile_error';
  }
}

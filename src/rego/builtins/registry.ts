import { typeName, type TypeName, type Value } from '../value/index.js';
import { kindsOf, type FunctionDecl, type RegoType } from './types.js';

/**
 * What a builtin may know about the evaluation calling it. The evaluator creates one per query
 * evaluation (`createBuiltinContext`); everything here is fixed for that evaluation.
 */
export interface BuiltinContext {
  /** The evaluation's clock, ns since the Unix epoch; `time.now_ns` returns it. */
  readonly timeNs: bigint;
  /** Environment variables visible to `opa.runtime()`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** When true a BuiltinError aborts evaluation; when false the call is undefined instead. */
  readonly strictBuiltinErrors: boolean;
  /** Throws when the evaluation has been cancelled (deadline); long-running builtins call it. */
  checkCancelled(): void;
  /** Output of `print`: one already formatted line. */
  print(line: string): void;
  /**
   * Per-evaluation memo, keyed by builtin-chosen strings: results of non-deterministic builtins
   * (`rand.intn`, `uuid.rfc4122` return the same value for the same arguments within a query),
   * parsed keys, etc.
   */
  readonly cache: Map<string, unknown>;
  /** `opa.runtime()`'s value beyond `env` (config, version…), if the host provides it. */
  readonly runtime?: Value;
  /** Host hooks for builtins that need the compiler or the rule being evaluated. */
  readonly hooks?: BuiltinHooks;
}

export interface BuiltinHooks {
  /** `rego.parse_module(filename, source)`: the module's AST as a value. */
  parseModule?(filename: string, source: string): Value;
  /** `rego.metadata.chain()` / `rego.metadata.rule()` for the rule being evaluated. */
  metadataChain?(): Value;
  metadataRule?(): Value;
  /** `trace(note)`: a note for the evaluation's tracer. */
  trace?(note: string): void;
}

export interface BuiltinContextOptions {
  timeNs?: bigint;
  env?: Readonly<Record<string, string | undefined>>;
  strictBuiltinErrors?: boolean;
  checkCancelled?: () => void;
  print?: (line: string) => void;
  runtime?: Value;
  hooks?: BuiltinHooks;
}

export function createBuiltinContext(options: BuiltinContextOptions = {}): BuiltinContext {
  return {
    timeNs: options.timeNs ?? BigInt(Date.now()) * 1_000_000n,
    env: options.env ?? {},
    strictBuiltinErrors: options.strictBuiltinErrors ?? false,
    checkCancelled: options.checkCancelled ?? (() => {}),
    print: options.print ?? ((line) => process.stderr.write(line + '\n')),
    cache: new Map(),
    ...(options.runtime !== undefined ? { runtime: options.runtime } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
  };
}

/** A builtin producing at most one value; `undefined` = the call is undefined. */
export type BuiltinFunction = (args: readonly Value[], ctx: BuiltinContext) => Value | undefined;
/** A builtin producing any number of values (OPA's relations, e.g. `walk`). */
export type BuiltinRelation = (args: readonly Value[], ctx: BuiltinContext) => Iterable<Value>;

interface BuiltinCommon {
  /** Rego name, e.g. `strings.replace_n`. */
  readonly name: string;
  readonly decl: FunctionDecl;
  /** Infix operator spelling (`plus` ↔ `+`), for capabilities and error messages. */
  readonly infix?: string;
  /** Results vary between evaluations (time, randomness, network). */
  readonly nondeterministic?: boolean;
  /** Rejected in Rego v1 and in strict mode. */
  readonly deprecated?: boolean;
  /** Needs something this build does not provide (network); calling it is a BuiltinError. */
  readonly unsupported?: string;
}

export type Builtin =
  | (BuiltinCommon & { readonly relation?: false; readonly impl: BuiltinFunction })
  | (BuiltinCommon & { readonly relation: true; readonly impl: BuiltinRelation });

// ---- errors -----------------------------------------------------------------------------------

/**
 * A builtin's failure on well-typed operands (bad format, out of range…). OPA code
 * `eval_builtin_error`; with strict builtin errors off the evaluator makes the call undefined.
 * `message` is `<builtin>: <detail>` once the registry has attached the builtin's name.
 */
export class BuiltinError extends Error {
  readonly code: string = 'eval_builtin_error';
  /**
   * Whether the error stops evaluation even with strict builtin errors off. The evaluator's rule:
   * `fatal || ctx.strictBuiltinErrors` → raise; otherwise the call is undefined.
   */
  readonly fatal: boolean = false;
  builtin = '';

  constructor(readonly detail: string) {
    super(detail);
    this.name = 'BuiltinError';
  }

  /** @internal called by `invoke` */
  attach(builtin: string): this {
    this.builtin = builtin;
    this.message = `${builtin}: ${this.detail}`;
    return this;
  }
}

/**
 * An operand of the wrong type: OPA code `eval_type_error`; like any builtin error it makes the call
 * undefined unless strict builtin errors are on (OPA's evaluator treats them alike).
 * Detail as OPA words it: `operand 1 must be string but got number`,
 * `operand 2 must be one of {object, set, array} but got null`.
 */
export class OperandTypeError extends BuiltinError {
  override readonly code: string = 'eval_type_error';

  constructor(position: number, expected: string | readonly string[], got: Value | string);
  constructor(detail: string);
  constructor(positionOrDetail: number | string, expected?: string | readonly string[], got?: Value | string) {
    super(
      typeof positionOrDetail === 'string'
        ? positionOrDetail
        : `operand ${positionOrDetail} must be ${expectation(expected!)} but got ${
            typeof got === 'string' && isTypeWord(got) ? got : typeName(got as Value)
          }`,
    );
    this.name = 'OperandTypeError';
  }
}

const TYPE_WORDS = new Set(['null', 'boolean', 'number', 'string', 'array', 'object', 'set', 'floating-point number']);
function isTypeWord(s: string): boolean {
  return TYPE_WORDS.has(s);
}

function expectation(expected: string | readonly string[]): string {
  if (typeof expected === 'string') return expected;
  return expected.length === 1 ? expected[0]! : `one of {${expected.join(', ')}}`;
}

/** Thrown by `invoke` for a builtin that this build cannot run (network access); always fatal. */
export class UnsupportedBuiltinError extends BuiltinError {
  override readonly fatal: boolean = true;
  constructor(reason: string) {
    super(`not supported: ${reason}`);
    this.name = 'UnsupportedBuiltinError';
  }
}

// ---- registry ----------------------------------------------------------------------------------

/** The builtins of one category file. */
export function defineBuiltins(...builtins: Builtin[]): readonly Builtin[] {
  return builtins;
}

export interface Registry {
  get(name: string): Builtin | undefined;
  has(name: string): boolean;
  readonly all: readonly Builtin[];
}

export function createRegistry(groups: readonly (readonly Builtin[])[]): Registry {
  const byName = new Map<string, Builtin>();
  for (const group of groups)
    for (const b of group) {
      if (byName.has(b.name)) throw new Error(`builtin ${b.name} declared twice`);
      byName.set(b.name, b);
    }
  const all = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { get: (n) => byName.get(n), has: (n) => byName.has(n), all };
}

const operandKinds = new WeakMap<Builtin, readonly (readonly TypeName[] | undefined)[]>();

/**
 * Checks each operand's kind against the declaration (OPA's `operand N must be …` errors), then
 * calls the implementation. Errors leave as BuiltinError/OperandTypeError named after the builtin;
 * anything else a builtin throws is a defect and is wrapped as a BuiltinError rather than escaping
 * untyped. Returns the result values (one or none for functions, any number for relations).
 */
export function invoke(builtin: Builtin, args: readonly Value[], ctx: BuiltinContext): Value | undefined {
  if (builtin.relation) throw new Error(`${builtin.name} is a relation; use invokeRelation`);
  checkOperands(builtin, args);
  try {
    return builtin.impl(args, ctx);
  } catch (e) {
    throw asBuiltinError(builtin, e);
  }
}

export function invokeRelation(builtin: Builtin, args: readonly Value[], ctx: BuiltinContext): Value[] {
  checkOperands(builtin, args);
  try {
    if (builtin.relation) return [...builtin.impl(args, ctx)];
    const v = builtin.impl(args, ctx);
    return v === undefined ? [] : [v];
  } catch (e) {
    throw asBuiltinError(builtin, e);
  }
}

function checkOperands(builtin: Builtin, args: readonly Value[]): void {
  if (builtin.unsupported) throw new UnsupportedBuiltinError(builtin.unsupported).attach(builtin.name);
  let kinds = operandKinds.get(builtin);
  if (kinds === undefined) {
    kinds = builtin.decl.args.map((t: RegoType) => kindsOf(t));
    operandKinds.set(builtin, kinds);
  }
  const n = Math.min(args.length, kinds.length);
  for (let i = 0; i < n; i++) {
    const k = kinds[i];
    if (k !== undefined && !k.includes(typeName(args[i]!))) {
      throw new OperandTypeError(i + 1, k, args[i]!).attach(builtin.name);
    }
  }
}

function asBuiltinError(builtin: Builtin, e: unknown): Error {
  if (e instanceof BuiltinError) return e.builtin ? e : e.attach(builtin.name);
  if (e instanceof Error && (e as { code?: unknown }).code === 'eval_cancel_error') return e;
  const detail = e instanceof Error ? e.message : String(e);
  return new BuiltinError(detail).attach(builtin.name);
}

/** OPA's capabilities JSON (`{"builtins": [...]}`) for the given builtins. */
export function capabilitiesOf(builtins: readonly Builtin[]): { builtins: unknown[] } {
  return {
    builtins: builtins.map((b) => ({
      name: b.name,
      ...(b.infix ? { infix: b.infix } : {}),
      decl: b.decl,
      ...(b.relation ? { relation: true } : {}),
      ...(b.nondeterministic ? { nondeterministic: true } : {}),
      ...(b.deprecated ? { deprecated: true } : {}),
    })),
  };
}

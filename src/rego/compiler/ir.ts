import type { Location } from '../syntax/ast.js';
import type { Value } from '../value/index.js';

/**
 * The compiled form the evaluator runs. Variables are resolved to slots of a per-rule frame,
 * constants are pre-built values, refs to rules and imports are resolved to absolute data paths,
 * and every call knows its target. Built by the `lower` pass, reordered by `safety`.
 */
export type Term =
  | { k: 'val'; v: Value }
  | { k: 'var'; slot: number; name: string }
  /** `input`, `data` or a local value, followed by a path of keys (any terms). */
  | { k: 'ref'; root: 'data' | 'input' | Term; path: Term[]; loc?: Location }
  | { k: 'arr'; items: Term[] }
  | { k: 'set'; items: Term[] }
  | { k: 'obj'; entries: Array<[Term, Term]> }
  | { k: 'call'; fn: Callee; args: Term[]; loc?: Location }
  | { k: 'acomp' | 'scomp'; term: Term; body: Body; own: SlotRange }
  | { k: 'ocomp'; key: Term; value: Term; body: Body; own: SlotRange }
  | { k: 'tmpl'; parts: Term[] };

/** A call target: a user function (absolute data path) or a builtin (by name). */
export type Callee = { k: 'func'; path: string[]; name: string } | { k: 'builtin'; name: string };

export interface With {
  /** `input`, `data` or a function/builtin name being replaced. */
  kind: 'input' | 'data' | 'func';
  /** For input/data: the path under the root. For func: the mocked name (dotted). */
  path: string[];
  name: string;
  value: Term;
  /** A function replacement (the value names a function or builtin). */
  replacement?: Callee;
}

export type Literal =
  | { k: 'term'; t: Term }
  | { k: 'unify'; a: Term; b: Term; assign: boolean }
  | { k: 'call'; fn: Callee; args: Term[]; out?: Term }
  | { k: 'somein'; key?: Term; value: Term; domain: Term }
  | { k: 'every'; key?: Term; value: Term; domain: Term; body: Body; own: SlotRange };

/** Frame slots `[from, to)` owned by a nested body (comprehension, every). */
export interface SlotRange {
  from: number;
  to: number;
}

export interface Expr {
  lit: Literal;
  negated: boolean;
  with?: With[];
  loc: Location;
  /** Source text of the expression (for query results and explanations). */
  text: string;
  /** Index in the source body (query results report expressions in source order). */
  index: number;
}

export type Body = Expr[];

/** What a rule contributes to the document at its path. */
export type RuleKind = 'complete' | 'set' | 'object' | 'function';

export interface Rule {
  kind: RuleKind;
  /** Absolute ground path of the document (`data.…` without `data`). */
  path: string[];
  /** For object rules: the key terms after the ground path (vars or computed), outermost first. */
  keys: Term[];
  /** For set rules: the element; otherwise the value. */
  value: Term;
  /** For functions: the argument patterns. */
  args: Term[];
  body: Body;
  frameSize: number;
  isDefault: boolean;
  else?: Rule;
  loc: Location;
  module: string;
  /** `rego.metadata.rule()` and `rego.metadata.chain()` for this rule (from METADATA comments). */
  metadata: { rule: Value; chain: Value };
  /** Whether a set rule adds its element at the end of `keys` (`a.b[x] contains y`). */
  nestedSet?: boolean;
}

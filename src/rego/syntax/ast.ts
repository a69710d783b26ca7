/**
 * The Rego abstract syntax tree. Plain JSON-serialisable objects in OPA's AST JSON shape as far as
 * practical (`{type, value}` terms, expressions with `terms`, rules with `head`/`body`), each node
 * carrying its source location. Numbers keep their source text so big and exact values survive.
 */

export interface Location {
  file: string;
  row: number;
  col: number;
  text?: string;
}

export type Term =
  | { type: 'null'; value: null; location?: Location }
  | { type: 'boolean'; value: boolean; location?: Location }
  | { type: 'number'; value: string; location?: Location }
  | { type: 'string'; value: string; location?: Location }
  | { type: 'var'; value: string; location?: Location }
  | { type: 'ref'; value: Term[]; location?: Location }
  | { type: 'array'; value: Term[]; location?: Location }
  | { type: 'set'; value: Term[]; location?: Location }
  | { type: 'object'; value: Array<[Term, Term]>; location?: Location }
  /** `value[0]` is the operator (a ref), the rest the arguments. */
  | { type: 'call'; value: Term[]; location?: Location }
  | { type: 'arraycomprehension'; value: { term: Term; body: Body }; location?: Location }
  | { type: 'setcomprehension'; value: { term: Term; body: Body }; location?: Location }
  | { type: 'objectcomprehension'; value: { key: Term; value: Term; body: Body }; location?: Location }
  /** `$"a {x} b"`: literal text parts and expression parts in order. */
  | { type: 'templatestring'; value: Array<Term>; location?: Location };

export type TermType = Term['type'];

/** `some x, y` or `some k, v in xs` (symbols are then a single `internal.member_2/3` call). */
export interface SomeDecl {
  type: 'somedecl';
  symbols: Term[];
  location?: Location;
}

export interface Every {
  type: 'every';
  key?: Term;
  value: Term;
  domain: Term;
  body: Body;
  location?: Location;
}

export interface With {
  target: Term;
  value: Term;
  location?: Location;
}

export interface Expr {
  index: number;
  /** A single term, a call `[operator, ...args]`, a `some` declaration or an `every`. */
  terms: Term | Term[] | SomeDecl | Every;
  negated?: boolean;
  with?: With[];
  /** Added by the compiler, not written by the user. */
  generated?: boolean;
  location?: Location;
}

export type Body = Expr[];

export interface Head {
  /** The first element of `ref` when it is a plain name. */
  name?: string;
  ref: Term[];
  args?: Term[];
  /** Partial set element (`p contains x`, v0 `p[x]`). */
  key?: Term;
  value?: Term;
  assign?: boolean;
  location?: Location;
}

export interface Rule {
  default?: boolean;
  head: Head;
  body: Body;
  else?: Rule;
  location?: Location;
  /** The `# METADATA` blocks attached to the rule. */
  annotations?: Annotations[];
}

export interface Import {
  path: Term;
  alias?: string;
  location?: Location;
}

export interface Package {
  path: Term[];
  location?: Location;
}

export interface Annotations {
  scope: string;
  title?: string;
  description?: string;
  entrypoint?: boolean;
  [field: string]: unknown;
  location?: Location;
}

export interface Module {
  package: Package;
  imports?: Import[];
  rules: Rule[];
  annotations?: Annotations[];
  regoVersion: 'v0' | 'v1';
}

export function isCall(terms: Expr['terms']): terms is Term[] {
  return Array.isArray(terms);
}

export function isTerm(terms: Expr['terms']): terms is Term {
  return !Array.isArray(terms) && terms.type !== 'somedecl' && terms.type !== 'every';
}

/** The dotted name of a ref made only of a var head and string parts (`data.a.b`, `io.jwt.decode`). */
export function refName(ref: Term): string | undefined {
  if (ref.type === 'var') return ref.value;
  if (ref.type !== 'ref') return undefined;
  const head = ref.value[0]!;
  if (head.type !== 'var') return undefined;
  let name = head.value;
  for (let i = 1; i < ref.value.length; i++) {
    const part = ref.value[i]!;
    if (part.type !== 'string') return undefined;
    name += '.' + part.value;
  }
  return name;
}

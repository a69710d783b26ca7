import { RegoError, RegoErrors } from '../errors.js';
import type { Annotations, Body, Every, Expr, Head, Import, Location, Module, Rule, SomeDecl, Term, With } from './ast.js';
import { tokenize, type Comment, type Token } from './lexer.js';
import { parse as parseYaml } from 'yaml';

export type RegoVersion = 'v0' | 'v1';

/** Words that never start a term. */
const RESERVED = new Set(['some', 'not', 'with', 'as', 'default', 'else', 'import', 'package']);

const RELATIONS: Record<string, string> = { '==': 'equal', '!=': 'neq', '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' };
const ADDITIVE: Record<string, string> = { '+': 'plus', '-': 'minus' };
const MULTIPLICATIVE: Record<string, string> = { '*': 'mul', '/': 'div', '%': 'rem' };

/** Parses one module. Throws RegoErrors (code rego_parse_error) with file, row and column. */
export function parseModule(file: string, text: string, version: RegoVersion = 'v1'): Module {
  return guard(() => new Parser(file, text, version).module());
}

/** Parses a query: literals separated by `;` or line breaks. */
export function parseQuery(text: string, version: RegoVersion = 'v1', file = 'query'): Body {
  return guard(() => new Parser(file, text, version).query());
}

/** Parses a single Rego term (e.g. an `input_term`). */
export function parseTerm(text: string, file = 'term'): Term {
  return guard(() => new Parser(file, text, 'v1').singleTerm());
}

function guard<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof RegoError) throw new RegoErrors([error]);
    throw error;
  }
}

class Parser {
  private readonly tokens: Token[];
  private readonly comments: Comment[];
  private pos = 0;
  private regoV1: boolean;
  private futureKeywords: boolean;
  private importedFuture = false;
  private importedRegoV1 = false;
  private templateVars = 0;

  constructor(
    private readonly file: string,
    text: string,
    version: RegoVersion,
  ) {
    const { tokens, comments } = tokenize(text, file);
    this.tokens = tokens;
    this.comments = comments;
    this.regoV1 = version === 'v1';
    this.futureKeywords = this.regoV1;
  }

  // ---- token helpers ----

  private get tok(): Token {
    return this.tokens[this.pos]!;
  }

  private peekAt(k: number): Token {
    return this.tokens[Math.min(this.pos + k, this.tokens.length - 1)]!;
  }

  private loc(t: Token = this.tok): Location {
    return { file: this.file, row: t.row, col: t.col };
  }

  private isPunct(p: string, t: Token = this.tok): boolean {
    return t.kind === 'punct' && t.text === p;
  }

  private isWord(w: string, t: Token = this.tok): boolean {
    return t.kind === 'ident' && t.text === w;
  }

  private accept(p: string): boolean {
    if (this.isPunct(p)) {
      this.pos++;
      return true;
    }
    return false;
  }

  private expect(p: string): Token {
    if (!this.isPunct(p)) this.fail(`unexpected ${this.describe()}: expected ${p}`);
    return this.tokens[this.pos++]!;
  }

  private describe(t: Token = this.tok): string {
    if (t.kind === 'eof') return 'eof token';
    if (t.kind === 'ident') return `ident token: ${t.text}`;
    if (t.kind === 'string') return 'string token';
    if (t.kind === 'number') return `number token: ${t.text}`;
    return `${t.text} token`;
  }

  private fail(message: string, t: Token = this.tok): never {
    throw new RegoError('rego_parse_error', message, this.loc(t));
  }

  // ---- modules ----

  module(): Module {
    if (!this.isWord('package')) this.fail(`package expected`);
    const pkgLoc = this.loc();
    this.pos++;
    const path = this.packagePath();
    const imports: Import[] = [];
    const rules: Rule[] = [];
    while (this.isWord('import')) imports.push(this.import());
    while (this.tok.kind !== 'eof') {
      if (this.isWord('import')) {
        imports.push(this.import());
        continue;
      }
      if (this.isWord('package')) this.fail('unexpected package keyword');
      rules.push(...this.rule());
    }
    const module: Module = {
      package: { path, location: pkgLoc },
      ...(imports.length ? { imports } : {}),
      rules,
      regoVersion: this.regoV1 ? 'v1' : 'v0',
    };
    this.attachAnnotations(module);
    return module;
  }

  /**
   * `# METADATA` comment blocks: YAML in the comment lines that follow, attached to the package
   * (a block before `package`, or scope package/subpackages) or to the rule that follows.
   */
  private attachAnnotations(module: Module): void {
    const comments = this.comments;
    for (let i = 0; i < comments.length; i++) {
      if (comments[i]!.text.trim() !== 'METADATA') continue;
      const start = comments[i]!;
      const lines: string[] = [];
      let row = start.row;
      let j = i + 1;
      for (; j < comments.length && comments[j]!.row === row + 1; j++, row++) lines.push(comments[j]!.text.replace(/^ /, ''));
      i = j - 1;
      let parsed: unknown;
      try {
        parsed = parseYaml(lines.join('\n')) ?? {};
      } catch (e) {
        throw new RegoError('rego_parse_error', `yaml: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`, { file: this.file, row: start.row, col: start.col });
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new RegoError('rego_parse_error', 'METADATA block must be a YAML mapping', { file: this.file, row: start.row, col: start.col });
      }
      const fields = parsed as Record<string, unknown>;
      const beforePackage = row < (module.package.location?.row ?? 0);
      const next = module.rules.find((r) => (r.location?.row ?? 0) > row);
      const scope = typeof fields.scope === 'string' ? fields.scope : beforePackage || !next ? 'package' : 'rule';
      const annotation: Annotations = { ...fields, scope, location: { file: this.file, row: start.row, col: start.col } };
      if (scope === 'package' || scope === 'subpackages') (module.annotations ??= []).push(annotation);
      else if (next) (next.annotations ??= []).push(annotation);
    }
  }

  private packagePath(): Term[] {
    const t = this.term();
    const parts = t.type === 'var' ? [t] : t.type === 'ref' ? t.value : undefined;
    if (!parts) this.fail('package name must be a reference');
    const path: Term[] = [{ type: 'var', value: 'data', location: t.location }];
    parts!.forEach((p, i) => {
      if (i === 0 && p.type === 'var') path.push({ type: 'string', value: p.value, location: p.location });
      else if (p.type === 'string') path.push(p);
      else this.fail('package path must contain only strings');
    });
    return path;
  }

  private import(): Import {
    const location = this.loc();
    this.pos++;
    const path = this.term();
    const head = path.type === 'ref' ? path.value[0] : path;
    if (!head || head.type !== 'var' || !['data', 'input', 'future', 'rego'].includes(head.value)) {
      this.fail('invalid path: path must begin with input, data, future or rego', this.tokens[this.pos - 1]);
    }
    const name = pathName(path);
    if (head!.type === 'var' && (head!.value === 'future' || head!.value === 'rego') && this.importedRegoV1) {
      this.fail('the `rego.v1` import implies `future.keywords`, these are therefore mutually exclusive', this.tokens[this.pos - 1]);
    }
    if (head!.type === 'var' && head!.value === 'future') {
      if (!name.startsWith('future.keywords')) this.fail(`invalid import ${name}, must be one of future.keywords`);
      this.importedFuture = true;
      this.futureKeywords = true;
    }
    if (head!.type === 'var' && head!.value === 'rego') {
      if (name !== 'rego.v1') this.fail(`invalid import \`${name}\`, must be \`rego.v1\``);
      if (this.importedFuture) this.fail('the `rego.v1` import implies `future.keywords`, these are therefore mutually exclusive', this.tokens[this.pos - 1]);
      this.importedRegoV1 = true;
      this.regoV1 = true;
      this.futureKeywords = true;
    }
    const imp: Import = { path, location };
    if (this.isWord('as')) {
      this.pos++;
      if (this.tok.kind !== 'ident') this.fail('import alias must be a name');
      imp.alias = this.tok.text;
      this.pos++;
    }
    return imp;
  }

  // ---- rules ----

  private rule(): Rule[] {
    const location = this.loc();
    const isDefault = this.isWord('default');
    if (isDefault) this.pos++;
    if (this.tok.kind !== 'ident' || RESERVED.has(this.tok.text)) this.fail(`unexpected ${this.describe()}`);
    const head = this.head(location);
    if (isDefault) {
      if (!head.value) this.fail('default rules must have a value');
      if (!isConstant(head.value)) {
        throw new RegoError('rego_compile_error', 'default rule value must be a constant (no references, calls or variables)', head.value.location ?? location);
      }
      return [{ default: true, head, body: [{ index: 0, terms: { type: 'boolean', value: true, location }, location }], location }];
    }
    const rule: Rule = { head, body: [], location };
    const bodyOpen = this.ruleBody();
    if (bodyOpen) rule.body = bodyOpen;
    else {
      if (head.value === undefined && head.key === undefined && !head.args) {
        // A bare ref with nothing else is not a rule.
        this.fail(`rule must have a body or a value`, this.tokens[this.pos - 1]);
      }
      rule.body = [{ index: 0, terms: { type: 'boolean', value: true, location }, location }];
    }
    this.fillDefaultValue(head);
    let current = rule;
    while (this.isWord('else')) {
      const elseLoc = this.loc();
      this.pos++;
      let value: Term = { type: 'boolean', value: true, location: elseLoc };
      if (this.accept('=') || this.accept(':=')) value = this.termIn();
      const body = this.ruleBody() ?? [{ index: 0, terms: { type: 'boolean', value: true, location: elseLoc }, location: elseLoc }];
      const elseRule: Rule = { head: { ...head, value, location: elseLoc }, body, location: elseLoc };
      current.else = elseRule;
      current = elseRule;
    }
    const rules = [rule];
    // v0: `p { a } { b }` defines p twice.
    while (this.isPunct('{') && !this.tok.newline && rule.body.length > 0 && !head.args) {
      const body = this.braceBody();
      rules.push({ head, body, location: this.loc() });
    }
    return rules;
  }

  private fillDefaultValue(head: Head): void {
    if (head.value === undefined && head.key === undefined) head.value = { type: 'boolean', value: true, location: head.location };
  }

  /** A rule body after the head: `if {…}`, `if expr`, or (v0) `{…}`. Undefined when none follows. */
  private ruleBody(): Body | undefined {
    if (this.isWord('if')) {
      this.pos++;
      if (this.isPunct('{')) return this.braceBodyOrObject();
      return [this.literal(0)];
    }
    if (this.isPunct('{') && (!this.tok.newline || !this.regoV1)) {
      if (this.regoV1) this.fail('`if` keyword is required before rule body');
      return this.braceBody();
    }
    return undefined;
  }

  /** After `if`, `{` opens a body — unless it is an object/set literal used as a single expression. */
  private braceBodyOrObject(): Body {
    const save = this.pos;
    try {
      return this.braceBody();
    } catch (error) {
      this.pos = save;
      try {
        return [this.literal(0)];
      } catch {
        throw error;
      }
    }
  }

  private braceBody(): Body {
    this.expect('{');
    const body = this.body('}');
    this.expect('}');
    if (body.length === 0) this.fail('found empty body', this.tokens[this.pos - 1]);
    return body;
  }

  private head(location: Location): Head {
    let t = this.term(true);
    if ((t.type === 'var' || t.type === 'ref') && this.isPunct('(') && !this.tok.newline) {
      // `f (x) := …`: a function head, with space before the arguments.
      const args: Term[] = [];
      this.pos++;
      while (!this.isPunct(')')) {
        args.push(this.termIn());
        if (!this.accept(',')) break;
      }
      this.expect(')');
      t = { type: 'call', value: [t, ...args], location };
    }
    const head: Head = { ref: [], location };
    if (t.type === 'var') head.ref = [t];
    else if (t.type === 'ref') head.ref = t.value;
    else if (t.type === 'call') {
      const op = t.value[0]!;
      head.ref = op.type === 'ref' ? op.value : [op];
      head.args = t.value.slice(1);
    } else this.fail('invalid rule head');
    if (head.ref[0]!.type !== 'var') this.fail('invalid rule head');
    for (const part of head.ref.slice(1)) {
      if (!['string', 'var', 'ref', 'number', 'boolean', 'null', 'array', 'object', 'set'].includes(part.type)) this.fail('invalid rule head reference');
    }
    head.name = (head.ref[0] as { value: string }).value;
    if (this.isWord('contains') && !head.args) {
      this.pos++;
      head.key = this.termIn();
    } else if (this.isPunct('=') || this.isPunct(':=')) {
      head.assign = this.tok.text === ':=';
      this.pos++;
      head.value = this.termIn();
    }
    if (!head.args && head.value === undefined && head.key === undefined && head.ref.length === 2 && !this.regoV1) {
      const last = head.ref[1]!;
      if (last.type === 'var' || !this.isPunct('=')) {
        // v0 `p[x] { … }` is a partial set.
        head.key = last;
        head.ref = [head.ref[0]!];
      }
    }
    return head;
  }

  // ---- bodies and literals ----

  query(): Body {
    const body = this.body('');
    if (this.tok.kind !== 'eof') this.fail(`unexpected ${this.describe()}`);
    if (body.length === 0) this.fail('empty query');
    return body;
  }

  singleTerm(): Term {
    const t = this.termIn();
    if (this.tok.kind !== 'eof') this.fail(`unexpected ${this.describe()}`);
    return t;
  }

  private body(closer: string): Body {
    const body: Body = [];
    while (true) {
      while (this.accept(';'));
      if (this.tok.kind === 'eof' || (closer && this.isPunct(closer))) return body;
      const lit = this.literal(body.length);
      body.push(lit);
      if (this.isPunct(';') || (this.tok as Token).kind === "eof" || (closer && this.isPunct(closer)) || this.tok.newline) continue;
      this.fail(`unexpected ${this.describe()}`);
    }
  }

  private literal(index: number): Expr {
    const location = this.loc();
    if (this.isWord('some')) {
      this.pos++;
      return this.withModifiers({ index, terms: this.some(location), location });
    }
    if (this.isWord('every') && this.futureKeywords && this.peekAt(1).kind === 'ident') {
      this.pos++;
      return this.withModifiers({ index, terms: this.every(location), location });
    }
    let negated = false;
    if (this.isWord('not') && !this.isPunct('(', this.peekAt(1))) {
      this.pos++;
      negated = true;
    }
    const expr = this.expr(index, location);
    if (negated) expr.negated = true;
    return this.withModifiers(expr);
  }

  private withModifiers(expr: Expr): Expr {
    while (this.isWord('with')) {
      const location = this.loc();
      this.pos++;
      const target = this.term();
      if (!this.isWord('as')) this.fail(`unexpected ${this.describe()}: expected as`);
      this.pos++;
      const value = this.termIn();
      (expr.with ??= []).push({ target, value, location } satisfies With);
    }
    return expr;
  }

  private some(location: Location): SomeDecl {
    const first = this.termRelation();
    if (this.isPunct(',') || this.isIn()) {
      const symbols: Term[] = [first];
      while (this.accept(',')) symbols.push(this.termRelation());
      if (this.isIn()) {
        this.pos++;
        const domain = this.termRelation();
        if (symbols.length > 2) this.fail('unexpected , token');
        const op = symbols.length === 2 ? 'internal.member_3' : 'internal.member_2';
        return { type: 'somedecl', symbols: [call(op, [...symbols, domain], location)], location };
      }
      for (const s of symbols) if (s.type !== 'var') this.fail('expected var in some declaration');
      return { type: 'somedecl', symbols, location };
    }
    if (first.type !== 'var') this.fail('expected var in some declaration');
    return { type: 'somedecl', symbols: [first], location };
  }

  private every(location: Location): Every {
    const first = this.termRelation();
    let key: Term | undefined;
    let value = first;
    if (this.accept(',')) {
      key = first;
      value = this.termRelation();
    }
    if (!this.isIn()) this.fail(`unexpected ${this.describe()}: expected in`);
    this.pos++;
    const domain = this.termRelation();
    const body = this.braceBody();
    return { type: 'every', ...(key ? { key } : {}), value, domain, body, location };
  }

  private isIn(): boolean {
    return this.futureKeywords && this.isWord('in');
  }

  private expr(index: number, location: Location): Expr {
    let lhs = this.termIn();
    if (this.isPunct(',') && this.futureKeywords) {
      // `k, v in xs`
      this.pos++;
      const value = this.termRelation();
      if (!this.isIn()) this.fail(`unexpected ${this.describe()}: expected in`);
      this.pos++;
      const domain = this.termRelation();
      lhs = call('internal.member_3', [lhs, value, domain], location);
    }
    if (this.isPunct('=') || this.isPunct(':=')) {
      const op = this.tok.text === '=' ? 'eq' : 'assign';
      this.pos++;
      let rhs = this.termIn();
      if (this.isPunct(',') && this.futureKeywords) {
        this.pos++;
        const value = this.termRelation();
        if (!this.isIn()) this.fail(`unexpected ${this.describe()}: expected in`);
        this.pos++;
        rhs = call('internal.member_3', [rhs, value, this.termRelation()], rhs.location);
      }
      return { index, terms: [opRef(op, location), lhs, rhs], location };
    }
    if (lhs.type === 'call') return { index, terms: lhs.value, location };
    return { index, terms: lhs, location };
  }

  // ---- terms, by precedence ----

  private termIn(noOr = false): Term {
    let lhs = this.termRelation(noOr);
    while (this.isIn()) {
      const location = this.loc();
      this.pos++;
      const rhs = this.termRelation(noOr);
      lhs = call('internal.member_2', [lhs, rhs], lhs.location ?? location);
    }
    return lhs;
  }

  private termRelation(noOr = false): Term {
    let lhs = this.termOr(noOr);
    while (this.tok.kind === 'punct' && RELATIONS[this.tok.text]) {
      const op = RELATIONS[this.tok.text]!;
      this.pos++;
      lhs = call(op, [lhs, this.termOr(noOr)], lhs.location);
    }
    return lhs;
  }

  private termOr(noOr: boolean): Term {
    let lhs = this.termAnd();
    while (!noOr && this.isPunct('|')) {
      this.pos++;
      lhs = call('or', [lhs, this.termAnd()], lhs.location);
    }
    return lhs;
  }

  private termAnd(): Term {
    let lhs = this.termArith();
    while (this.isPunct('&')) {
      this.pos++;
      lhs = call('and', [lhs, this.termArith()], lhs.location);
    }
    return lhs;
  }

  private termArith(): Term {
    let lhs = this.termFactor();
    while (this.tok.kind === 'punct' && ADDITIVE[this.tok.text]) {
      const op = ADDITIVE[this.tok.text]!;
      this.pos++;
      lhs = call(op, [lhs, this.termFactor()], lhs.location);
    }
    return lhs;
  }

  private termFactor(): Term {
    let lhs = this.term();
    while (this.tok.kind === 'punct' && MULTIPLICATIVE[this.tok.text]) {
      const op = MULTIPLICATIVE[this.tok.text]!;
      this.pos++;
      lhs = call(op, [lhs, this.term()], lhs.location);
    }
    return lhs;
  }

  /** A primary term with its ref/call suffixes. `inHead` allows keywords as rule names. */
  term(inHead = false): Term {
    const t = this.tok;
    const location = this.loc();
    let base: Term;
    switch (t.kind) {
      case 'number':
        this.pos++;
        base = { type: 'number', value: t.text, location };
        break;
      case 'string':
        this.pos++;
        base = { type: 'string', value: t.text, location };
        break;
      case 'template':
        this.pos++;
        base = this.template(t, location);
        break;
      case 'ident':
        if (!inHead && RESERVED.has(t.text)) this.fail(`unexpected ${this.describe()}`);
        this.pos++;
        if (t.text === 'true' || t.text === 'false') base = { type: 'boolean', value: t.text === 'true', location };
        else if (t.text === 'null') base = { type: 'null', value: null, location };
        else base = { type: 'var', value: t.text, location };
        break;
      case 'punct':
        if (t.text === '-') {
          // As OPA: `-` before a number literal negates it; before a ref it is `minus(0, ref)`
          // (OPA pull request 8551); before anything else it is an error.
          this.pos++;
          const next = this.tok;
          if (next.kind === 'number') {
            this.pos++;
            base = { type: 'number', value: '-' + next.text, location };
          } else if (next.kind === 'ident' && !RESERVED.has(next.text) && !['true', 'false', 'null'].includes(next.text)) {
            const operand = this.term();
            if (operand.type !== 'var' && operand.type !== 'ref') this.fail('unary minus is only allowed before a number or a reference', t);
            return call('minus', [{ type: 'number', value: '0', location }, operand], location);
          } else this.fail('unary minus is only allowed before a number or a reference', t);
        } else if (t.text === '(') {
          this.pos++;
          base = this.termIn();
          if (this.isPunct(',') && this.futureKeywords) {
            this.pos++;
            const value = this.termRelation();
            if (!this.isIn()) this.fail(`unexpected ${this.describe()}: expected in`);
            this.pos++;
            base = call('internal.member_3', [base, value, this.termRelation()], location);
          }
          this.expect(')');
        } else if (t.text === '[') base = this.array(location);
        else if (t.text === '{') base = this.braces(location);
        else this.fail(`unexpected ${this.describe()}`);
        break;
      default:
        this.fail(`unexpected ${this.describe()}`);
    }
    return this.suffixes(base!, location);
  }

  private suffixes(base: Term, location: Location): Term {
    let result = base;
    const canRef = ['var', 'ref', 'call', 'array', 'object', 'set', 'string', 'arraycomprehension', 'setcomprehension', 'objectcomprehension'].includes(base.type);
    while (canRef && !this.tok.space) {
      if (this.isPunct('.')) {
        this.pos++;
        const key = this.tok;
        if (key.kind !== 'ident' || key.space) this.fail(`unexpected ${this.describe()}: expected ident`);
        this.pos++;
        result = extendRef(result, { type: 'string', value: key.text, location: this.loc(key) }, location);
      } else if (this.isPunct('[')) {
        this.pos++;
        const key = this.termIn();
        this.expect(']');
        result = extendRef(result, key, location);
      } else if (this.isPunct('(') && (result.type === 'var' || result.type === 'ref')) {
        this.pos++;
        const args: Term[] = [];
        while (!this.isPunct(')')) {
          args.push(this.termIn());
          if (!this.accept(',')) break;
        }
        this.expect(')');
        const op: Term = result;
        // `set()` is the empty set literal.
        if (args.length === 0 && op.type === 'var' && op.value === 'set') result = { type: 'set', value: [], location };
        else result = { type: 'call', value: [op, ...args], location };
      } else break;
    }
    return result;
  }

  private array(location: Location): Term {
    this.expect('[');
    if (this.accept(']')) return { type: 'array', value: [], location };
    const comprehension = this.tryComprehension(']', false);
    if (comprehension) return { type: 'arraycomprehension', value: { term: comprehension.head, body: comprehension.body }, location };
    const items = [this.termIn()];
    while (this.accept(',')) {
      if (this.isPunct(']')) break;
      items.push(this.termIn());
    }
    this.expect(']');
    return { type: 'array', value: items, location };
  }

  /**
   * `[x | body]`, `{x | body}`, `{k: v | body}`: as OPA, a comprehension's head is a primary term
   * (parenthesise an infix expression); anything else is a collection literal. Returns undefined
   * (position restored) when the text is not a comprehension.
   */
  private tryComprehension(closer: string, keyed: boolean): { head: Term; value?: Term; body: Body } | undefined {
    const save = this.pos;
    try {
      const head = this.term();
      let value: Term | undefined;
      if (keyed) {
        if (!this.accept(':')) throw new RegoError('rego_parse_error', 'not keyed');
        value = this.term();
      }
      if (this.isPunct('|')) {
        const body = this.tryComprehensionBody(closer);
        if (body) return value ? { head, value, body } : { head, body };
      }
    } catch (error) {
      if (!(error instanceof RegoError)) throw error;
    }
    this.pos = save;
    return undefined;
  }

  private braces(location: Location): Term {
    this.expect('{');
    if (this.accept('}')) return { type: 'object', value: [], location };
    const objectComprehension = this.tryComprehension('}', true);
    if (objectComprehension) {
      return { type: 'objectcomprehension', value: { key: objectComprehension.head, value: objectComprehension.value!, body: objectComprehension.body }, location };
    }
    const setComprehension = this.tryComprehension('}', false);
    if (setComprehension) return { type: 'setcomprehension', value: { term: setComprehension.head, body: setComprehension.body }, location };
    const first = this.termIn();
    if (this.accept(':')) {
      const pairs: Array<[Term, Term]> = [[first, this.termIn()]];
      while (this.accept(',')) {
        if (this.isPunct('}')) break;
        const k = this.termIn();
        this.expect(':');
        pairs.push([k, this.termIn()]);
      }
      this.expect('}');
      return { type: 'object', value: pairs, location };
    }
    const items = [first];
    while (this.accept(',')) {
      if (this.isPunct('}')) break;
      items.push(this.termIn());
    }
    this.expect('}');
    return { type: 'set', value: items, location };
  }

  /** At `|`: the comprehension body up to and including `closer`, or undefined (position kept) when it is not one. */
  private tryComprehensionBody(closer: string): Body | undefined {
    const save = this.pos;
    this.pos++;
    try {
      const body = this.body(closer);
      this.expect(closer);
      if (body.length > 0) return body;
    } catch (error) {
      if (!(error instanceof RegoError)) throw error;
    }
    this.pos = save;
    return undefined;
  }

  private template(t: Token, location: Location): Term {
    const parts: Term[] = [];
    for (const part of t.parts ?? []) {
      if (part.literal) {
        if (part.text) parts.push({ type: 'string', value: part.text, location });
        continue;
      }
      const inner = new Parser(this.file, part.text, this.regoV1 ? 'v1' : 'v0');
      inner.futureKeywords = true;
      const expr = inner.literal(0);
      if (inner.tok.kind !== 'eof' || expr.negated || Array.isArray(expr.terms) || expr.terms.type === 'somedecl' || expr.terms.type === 'every') {
        this.fail('invalid template expression', t);
      }
      const term = expr.terms as Term;
      if (!expr.with) {
        parts.push(term);
        continue;
      }
      // `{x with input as y}`: the first value of `[v | v = x with input as y]`.
      const v: Term = { type: 'var', value: `__template${this.templateVars++}__`, location };
      const body: Body = [{ index: 0, terms: [opRef('eq', location), v, term], with: expr.with, location }];
      parts.push({ type: 'ref', value: [{ type: 'arraycomprehension', value: { term: v, body }, location }, { type: 'number', value: '0', location }], location });
    }
    return { type: 'templatestring', value: parts, location };
  }
}

function isConstant(t: Term): boolean {
  switch (t.type) {
    case 'null':
    case 'boolean':
    case 'number':
    case 'string':
      return true;
    case 'array':
    case 'set':
      return t.value.every(isConstant);
    case 'object':
      return t.value.every(([k, v]) => isConstant(k) && isConstant(v));
    case 'arraycomprehension':
    case 'setcomprehension':
    case 'objectcomprehension':
      return true;
    default:
      return false;
  }
}

function extendRef(base: Term, key: Term, location: Location): Term {
  if (base.type === 'ref') return { type: 'ref', value: [...base.value, key], location: base.location ?? location };
  return { type: 'ref', value: [base, key], location: base.location ?? location };
}

/** A ref naming an operator or builtin: `eq`, `internal.member_2`. */
export function opRef(name: string, location?: Location): Term {
  const [head, ...rest] = name.split('.');
  const headTerm: Term = { type: 'var', value: head!, ...(location ? { location } : {}) };
  return { type: 'ref', value: [headTerm, ...rest.map((r): Term => ({ type: 'string', value: r }))], ...(location ? { location } : {}) };
}

function call(name: string, args: Term[], location?: Location): Term {
  return { type: 'call', value: [opRef(name, location), ...args], ...(location ? { location } : {}) };
}

function pathName(t: Term): string {
  if (t.type === 'var') return t.value;
  if (t.type !== 'ref') return '';
  return t.value.map((p, i) => (i === 0 ? (p as { value: string }).value : p.type === 'string' ? p.value : '[...]')).join('.');
}

import { builtins } from '../builtins/index.js';
import { fromJSON, RegoObject, type Value } from '../value/index.js';
import { RegoError, RegoErrors } from '../errors.js';
import type * as A from '../syntax/ast.js';
import { refName } from '../syntax/ast.js';
import { buildIndex } from './indexing.js';
import { checkBuiltinCalls } from './typecheck.js';
import type { Body, Rule, RuleKind, Term } from './ir.js';
import { Frame, Lowerer, patternVars, type Resolver } from './lower.js';
import { newNode, type DataNode, type Program, type RuleSet } from './program.js';
import { collectSlots, reorderBody, reorderTermBodies, termVars, type Acc } from './safety.js';

export interface CompilerOptions {
  strict?: boolean;
}

/** A rule as the compiler first sees it: its module, package and head shape. */
export interface RuleInfo {
  ast: A.Rule;
  module: A.Module;
  file: string;
  packagePath: string[];
  kind: RuleKind;
  /** Ground path of the document the rule contributes to. */
  path: string[];
  /** Head ref parts after the ground path (object and nested set rules). */
  keyTerms: A.Term[];
}

/** The state the passes transform, in order. */
export interface CompileState {
  modules: Map<string, A.Module>;
  options: CompilerOptions;
  errors: RegoError[];
  rules: RuleInfo[];
  program: Program;
}

export interface Pass {
  name: string;
  run(state: CompileState): void;
}

const DEPRECATED = new Set(['any', 'all', 're_match', 'net.cidr_overlap', 'set_diff', 'cast_array', 'cast_set', 'cast_string', 'cast_boolean', 'cast_null', 'cast_object']);

/** The compiler: each pass is testable alone; compile() runs them in order and stops at errors. */
export const passes: readonly Pass[] = [
  { name: 'checkImports', run: checkImports },
  { name: 'checkStrict', run: checkStrict },
  { name: 'collectRules', run: collectRules },
  { name: 'buildRuleTree', run: buildRuleTree },
  { name: 'lowerRules', run: lowerRules },
  { name: 'checkTypes', run: checkTypes },
  { name: 'checkRecursion', run: checkRecursion },
  { name: 'buildIndexes', run: buildIndexes },
];

export function compileModules(modules: Map<string, A.Module>, options: CompilerOptions = {}): Program {
  const state: CompileState = { modules, options, errors: [], rules: [], program: { root: newNode([]), ruleSets: new Map() } };
  for (const pass of passes) {
    pass.run(state);
    if (state.errors.length) throw new RegoErrors(state.errors);
  }
  return state.program;
}

// ---- checkImports: duplicate imports and reserved names (v1 rules) ----

export function checkImports(state: CompileState): void {
  for (const [file, m] of state.modules) {
    const seen = new Set<string>();
    for (const imp of m.imports ?? []) {
      const name = imp.alias ?? lastName(imp.path);
      if (name === undefined) continue;
      const head = refName(imp.path)?.split('.')[0];
      if (head === 'future' || head === 'rego') continue;
      if (seen.has(name) && (m.regoVersion === 'v1' || state.options.strict)) {
        state.errors.push(new RegoError('rego_compile_error', `import must not shadow import ${name}`, imp.location ?? { file, row: 1, col: 1 }));
      }
      seen.add(name);
    }
  }
}

function lastName(t: A.Term): string | undefined {
  if (t.type === 'var') return t.value;
  if (t.type !== 'ref') return undefined;
  const last = t.value[t.value.length - 1]!;
  return last.type === 'string' ? last.value : last.type === 'var' ? last.value : undefined;
}

// ---- checkStrict: OPA's strict mode (unused imports, unused assignments) ----

export function checkStrict(state: CompileState): void {
  if (!state.options.strict) return;
  for (const [file, m] of state.modules) {
    const used = new Map<string, number>();
    const count = (t: A.Term | A.Body | A.Rule | undefined): void => {
      if (t === undefined) return;
      JSON.stringify(t, (key, value: unknown) => {
        if (value && typeof value === 'object' && (value as { type?: unknown }).type === 'var') {
          const name = (value as { value: string }).value;
          used.set(name, (used.get(name) ?? 0) + 1);
        }
        return key === 'location' ? undefined : value;
      });
    };
    m.rules.forEach(count);
    for (const imp of m.imports ?? []) {
      const head = refName(imp.path)?.split('.')[0];
      if (head === 'future' || head === 'rego') continue;
      const name = imp.alias ?? lastName(imp.path);
      if (name && !used.has(name)) {
        state.errors.push(new RegoError('rego_compile_error', `import ${refName(imp.path) ?? name} unused`, imp.location ?? { file, row: 1, col: 1 }));
      }
    }
    for (const rule of m.rules) {
      used.clear();
      count(rule);
      const visit = (body: A.Body): void => {
        for (const e of body) {
          const terms = e.terms;
          if (Array.isArray(terms) && refName(terms[0]!) === 'assign') {
            for (const n of patternVars(terms[1]!)) {
              if ((used.get(n) ?? 0) <= 1) state.errors.push(new RegoError('rego_compile_error', `assigned var ${n} unused`, e.location ?? rule.location ?? { file, row: 1, col: 1 }));
            }
          }
        }
      };
      visit(rule.body);
    }
  }
}

// ---- collectRules: kind and ground path of each rule ----

export function collectRules(state: CompileState): void {
  for (const [file, m] of state.modules) {
    const packagePath = m.package.path.slice(1).map((t) => (t as { value: string }).value);
    for (const rule of m.rules) {
      const head = rule.head;
      const name = (head.ref[0] as { value: string }).value;
      if ((name === 'input' || name === 'data') && head.ref.length === 1 && (m.regoVersion === 'v1' || state.options.strict)) {
        state.errors.push(new RegoError('rego_compile_error', `rule name conflicts with built-in variable ${name}`, rule.location ?? { file, row: 1, col: 1 }));
        continue;
      }
      const path = [...packagePath, name];
      let i = 1;
      for (; i < head.ref.length; i++) {
        const part = head.ref[i]!;
        if (part.type !== 'string') break;
        path.push(part.value);
      }
      const keyTerms = head.ref.slice(i);
      let kind: RuleKind;
      if (head.args) kind = 'function';
      else if (head.key !== undefined) kind = 'set';
      else if (keyTerms.length > 0) kind = 'object';
      else kind = 'complete';
      if (kind === 'function' && keyTerms.length) {
        state.errors.push(new RegoError('rego_parse_error', 'function name must be a plain reference', rule.location ?? { file, row: 1, col: 1 }));
        continue;
      }
      state.rules.push({ ast: rule, module: m, file, packagePath, kind, path, keyTerms });
    }
  }
}

// ---- buildRuleTree: data tree nodes, rule sets, kind conflicts ----

export function buildRuleTree(state: CompileState): void {
  const { program } = state;
  for (const m of state.modules.values()) nodeAt(program.root, m.package.path.slice(1).map((t) => (t as { value: string }).value));
  const byPath = new Map<string, RuleInfo[]>();
  for (const info of state.rules) {
    const key = info.path.join('.');
    let list = byPath.get(key);
    if (!list) byPath.set(key, (list = []));
    list.push(info);
  }
  for (const [key, infos] of byPath) {
    const kinds = new Set(infos.map((i) => i.kind));
    const loc = infos[0]!.ast.location ?? { file: infos[0]!.file, row: 1, col: 1 };
    if (kinds.size > 1) {
      state.errors.push(new RegoError('rego_type_error', `conflicting rules data.${key} found`, loc));
      continue;
    }
    const kind = infos[0]!.kind;
    const arities = new Set(infos.map((i) => i.ast.head.args?.length ?? 0));
    if (kind === 'function' && arities.size > 1) {
      state.errors.push(new RegoError('rego_type_error', `conflicting rules data.${key} found`, loc));
      continue;
    }
    const defaults = infos.filter((i) => i.ast.default);
    if (defaults.length > 1) {
      state.errors.push(new RegoError('rego_type_error', `multiple default rules data.${key} found`, defaults[1]!.ast.location ?? loc));
      continue;
    }
    const node = nodeAt(program.root, infos[0]!.path);
    const rs: RuleSet = { path: infos[0]!.path, name: 'data.' + key, kind, rules: [], arity: infos[0]!.ast.head.args?.length ?? 0 };
    node.ruleSet = rs;
    program.ruleSets.set(rs.name, rs);
  }
  // A complete rule cannot have rules below it.
  for (const rs of program.ruleSets.values()) {
    const node = nodeAt(program.root, rs.path);
    if (rs.kind === 'complete' && node.children.size > 0 && hasRules(node)) {
      const info = state.rules.find((r) => r.path.join('.') === rs.path.join('.'))!;
      state.errors.push(new RegoError('rego_type_error', `rule ${rs.name} conflicts with rules below it`, info.ast.location ?? { file: info.file, row: 1, col: 1 }));
    }
  }
}

function hasRules(node: DataNode): boolean {
  for (const c of node.children.values()) if (c.ruleSet || hasRules(c)) return true;
  return false;
}

function nodeAt(root: DataNode, path: readonly string[]): DataNode {
  let node = root;
  for (let i = 0; i < path.length; i++) {
    let next = node.children.get(path[i]!);
    if (!next) {
      next = newNode(path.slice(0, i + 1));
      node.children.set(path[i]!, next);
    }
    node = next;
  }
  return node;
}

// ---- lowerRules: name resolution, frames, safety ordering ----

/** A resolver for bodies in one module (also used for queries). */
export function resolverFor(state: { program: Program; options?: CompilerOptions }, module: A.Module | undefined, file: string, ruleNames: ReadonlySet<string>): Resolver {
  const imports = new Map<string, A.Term>();
  for (const imp of module?.imports ?? []) {
    const head = refName(imp.path)?.split('.')[0];
    if (head === 'future' || head === 'rego') continue;
    const name = imp.alias ?? lastName(imp.path);
    if (name) imports.set(name, imp.path);
  }
  return {
    packagePath: module ? module.package.path.slice(1).map((t) => (t as { value: string }).value) : [],
    ruleNames,
    imports,
    functionArity: (path) => {
      const rs = state.program.ruleSets.get('data.' + path.join('.'));
      return rs && rs.kind === 'function' ? rs.arity : undefined;
    },
    builtinArity: (name) => {
      if (name === 'internal.member_2') return 2;
      if (name === 'internal.member_3') return 3;
      if (name === 'print' || name === 'internal.print') return 0;
      return builtins.get(name)?.decl.args.length;
    },
    regoV1: module?.regoVersion === 'v1',
    strict: !!state.options?.strict,
    builtinDeprecated: (name) => !!builtins.get(name)?.deprecated,
    builtinHasResult: (name) => (name === 'print' || name === 'internal.print' ? false : builtins.get(name)?.decl.result !== undefined),
    file,
  };
}

export function lowerRules(state: CompileState): void {
  const namesByPackage = new Map<string, Set<string>>();
  for (const info of state.rules) {
    const key = info.packagePath.join('.');
    let names = namesByPackage.get(key);
    if (!names) namesByPackage.set(key, (names = new Set()));
    names.add(info.path[info.packagePath.length]!);
  }
  const resolvers = new Map<A.Module, Resolver>();
  for (const info of state.rules) {
    let r = resolvers.get(info.module);
    if (!r) {
      r = resolverFor(state, info.module, info.file, namesByPackage.get(info.packagePath.join('.')) ?? new Set());
      resolvers.set(info.module, r);
    }
    const lowerer = new Lowerer(r);
    const rule = lowerRule(lowerer, info, info.ast, state.errors);
    state.errors.push(...lowerer.errors);
    const rs = state.program.ruleSets.get('data.' + info.path.join('.'))!;
    if (info.ast.default) rs.default = rule;
    else rs.rules.push(rule);
  }
}

function lowerRule(lowerer: Lowerer, info: RuleInfo, ast: A.Rule, errors: RegoError[]): Rule {
  const head = ast.head;
  const frame = new Frame();
  const declared = new Set<string>();
  for (const a of head.args ?? []) for (const n of patternVars(a)) declared.add(n);
  const headTerms = [...info.keyTerms, ...(head.key ? [head.key] : []), ...(head.value ? [head.value] : [])];
  for (const t of headTerms) for (const n of allVars(t)) if (!lowerer.isGlobal(n) || declared.has(n)) declared.add(n);
  const argNames = (head.args ?? []).flatMap(patternVars);
  const scope = lowerer.openScope(ast.body, frame, undefined, declared, argNames);
  const args = (head.args ?? []).map((a) => lowerer.term(a, scope));
  const keys = info.keyTerms.map((t) => lowerer.term(t, scope));
  const valueAst = info.kind === 'set' ? head.key! : (head.value ?? { type: 'boolean', value: true });
  const value = lowerer.term(valueAst, scope);
  const body = lowerer.body(ast.body, scope);
  const loc = ast.location ?? { file: info.file, row: 1, col: 1 };
  const rule: Rule = {
    kind: info.kind,
    path: info.path,
    keys,
    value,
    args,
    body,
    frameSize: 0,
    isDefault: !!ast.default,
    loc,
    module: info.file,
    metadata: metadataOf(info, ast),
    ...(info.kind === 'set' && keys.length > 0 ? { nestedSet: true } : {}),
  };
  // Safety: arguments are bound on entry; head terms must be bound by the body.
  const bound = new Set<number>();
  for (const a of args) collectSlots(a, bound);
  const headUses = new Set<number>();
  for (const t of [...keys, value]) collectSlots(t, headUses);
  rule.body = reorderBody(body, bound, errors, headUses);
  for (const t of [...keys, value]) reorderTermBodies(t, bound, errors, ast.location ?? { file: info.file, row: 1, col: 1 });
  const acc: Acc = { needs: new Set(), needNames: new Map(), outs: new Set() };
  for (const t of [...keys, value]) termVars(t, bound, false, acc);
  for (const name of new Set(acc.needNames.values())) errors.push(new RegoError('rego_unsafe_var_error', `var ${name} is unsafe`, loc));
  if (ast.else) {
    const elseInfo = { ...info };
    const elseRule = lowerRule(lowerer, elseInfo, { ...ast.else, head: { ...ast.else.head, args: head.args ?? [] } }, errors);
    if (!head.args) elseRule.args = [];
    rule.else = elseRule;
  }
  rule.frameSize = frame.size;
  return rule;
}

/** The values of rego.metadata.rule() and rego.metadata.chain() inside a rule. */
function metadataOf(info: RuleInfo, ast: A.Rule): { rule: Value; chain: Value } {
  const plain = (a: A.Annotations): Value => {
    const { location: _location, ...fields } = a;
    return fromJSON(fields);
  };
  const ruleAnnotation = ast.annotations?.[0];
  const chain: Value[] = [
    RegoObject.fromRecord({
      path: ['data', ...info.path],
      ...(ruleAnnotation ? { annotations: plain(ruleAnnotation) } : {}),
    }),
  ];
  for (const a of info.module.annotations ?? []) {
    chain.push(RegoObject.fromRecord({ path: ['data', ...info.packagePath], annotations: plain(a) }));
  }
  return { rule: ruleAnnotation ? plain(ruleAnnotation) : new RegoObject(), chain };
}

function allVars(t: A.Term): string[] {
  switch (t.type) {
    case 'var':
      return t.value === '_' ? [] : [t.value];
    case 'ref':
    case 'array':
    case 'set':
    case 'call':
      return t.value.flatMap(allVars);
    case 'object':
      return t.value.flatMap(([k, v]) => [...allVars(k), ...allVars(v)]);
    default:
      return [];
  }
}

// ---- checkTypes: builtin arguments known at compile time ----

export function checkTypes(state: CompileState): void {
  for (const rs of state.program.ruleSets.values()) {
    checkBuiltinCalls(rs.rules, state.errors);
    if (rs.default) checkBuiltinCalls([rs.default], state.errors);
  }
}

// ---- checkRecursion: no rule may depend on itself ----

export function checkRecursion(state: CompileState): void {
  const { program } = state;
  const deps = new Map<RuleSet, Set<RuleSet>>();
  const names = [...program.ruleSets.keys()];
  for (const rs of program.ruleSets.values()) {
    const out = new Set<RuleSet>();
    const refPath = (path: string[]): void => {
      const prefix = 'data.' + path.join('.');
      for (const n of names) {
        if (n === prefix || n.startsWith(prefix + '.') || prefix.startsWith(n + '.')) out.add(program.ruleSets.get(n)!);
      }
    };
    const visitTerm = (t: Term): void => {
      switch (t.k) {
        case 'ref':
          if (t.root === 'data') {
            const ground: string[] = [];
            for (const p of t.path) {
              if (p.k === 'val' && typeof p.v === 'string') ground.push(p.v);
              else break;
            }
            refPath(ground);
          } else if (typeof t.root !== 'string') visitTerm(t.root);
          t.path.forEach(visitTerm);
          return;
        case 'call':
          if (t.fn.k === 'func') refPath(t.fn.path);
          t.args.forEach(visitTerm);
          return;
        case 'arr':
        case 'set':
          t.items.forEach(visitTerm);
          return;
        case 'obj':
          t.entries.forEach(([a, b]) => {
            visitTerm(a);
            visitTerm(b);
          });
          return;
        case 'acomp':
        case 'scomp':
          visitTerm(t.term);
          visitBody(t.body);
          return;
        case 'ocomp':
          visitTerm(t.key);
          visitTerm(t.value);
          visitBody(t.body);
          return;
        case 'tmpl':
          t.parts.forEach(visitTerm);
          return;
        default:
          return;
      }
    };
    const visitBody = (body: Body): void => {
      for (const e of body) {
        const lit = e.lit;
        switch (lit.k) {
          case 'term':
            visitTerm(lit.t);
            break;
          case 'unify':
            visitTerm(lit.a);
            visitTerm(lit.b);
            break;
          case 'call':
            if (lit.fn.k === 'func') refPath(lit.fn.path);
            lit.args.forEach(visitTerm);
            if (lit.out) visitTerm(lit.out);
            break;
          case 'somein':
            visitTerm(lit.domain);
            break;
          case 'every':
            visitTerm(lit.domain);
            visitBody(lit.body);
            break;
        }
        for (const w of e.with ?? []) {
          visitTerm(w.value);
          if (w.replacement?.k === 'func') refPath(w.replacement.path);
        }
      }
    };
    const visitRule = (r: Rule): void => {
      visitBody(r.body);
      visitTerm(r.value);
      r.keys.forEach(visitTerm);
      if (r.else) visitRule(r.else);
    };
    rs.rules.forEach(visitRule);
    if (rs.default) visitRule(rs.default);
    deps.set(rs, out);
  }
  const state2 = new Map<RuleSet, 0 | 1 | 2>();
  const stack: RuleSet[] = [];
  const reported = new Set<RuleSet>();
  const dfs = (rs: RuleSet): void => {
    state2.set(rs, 1);
    stack.push(rs);
    for (const d of deps.get(rs) ?? []) {
      const s = state2.get(d) ?? 0;
      if (s === 1) {
        // A package-level ref that includes the rule itself is not recursion unless a cycle goes through it.
        const cycle = stack.slice(stack.indexOf(d));
        if (!reported.has(d)) {
          reported.add(d);
          const rule = d.rules[0] ?? d.default!;
          state.errors.push(
            new RegoError('rego_recursion_error', `rule ${d.name} is recursive: ${[...cycle, d].map((c) => c.name).join(' -> ')}`, rule.loc),
          );
        }
      } else if (s === 0) dfs(d);
    }
    stack.pop();
    state2.set(rs, 2);
  };
  for (const rs of program.ruleSets.values()) if (!state2.get(rs)) dfs(rs);
}

// ---- buildIndexes ----

export function buildIndexes(state: CompileState): void {
  for (const rs of state.program.ruleSets.values()) {
    if (rs.kind === 'function' || rs.rules.length < 2) continue;
    const index = buildIndex(rs.rules);
    if (index) rs.index = index;
  }
}

import { RegoObject, RegoSet, compare, equals, num, typeName, type Value } from '../value/index.js';
import { BuiltinError, defineBuiltins } from './registry.js';
import { goSprintf, type FmtArg } from './gofmt.js';
import { obj, str } from './operands.js';
import { T, anyObject } from './types.js';

/**
 * `strings.render_template`: Go's text/template over the variables object, with OPA's
 * `missingkey=error`. Supported: text, `{{- -}}` trimming, comments, pipelines with `|`, fields
 * (`.a.b`, `$x.a`), variables (`$x := …`), literals, `if`/`else if`/`else`, `range` (with `$i, $v :=`
 * and `else`), `with`, `end`, and the functions and, or, not, len, index, eq, ne, lt, le, gt, ge,
 * print, printf, println. Anything else is a template error, as Go would report an unknown function.
 * Known difference: OPA hands numbers to the template as json.Number (a string type), so Go
 * rejects numeric printf verbs and ordered comparisons on them; here they work as numbers.
 */

class TemplateError extends Error {}

type Node =
  | { k: 'text'; text: string }
  | { k: 'action'; pipe: Pipe; line: number }
  | { k: 'if' | 'with'; pipe: Pipe; then: Node[]; else: Node[]; line: number }
  | { k: 'range'; pipe: Pipe; then: Node[]; else: Node[]; line: number };

interface Pipe {
  decl: string[];
  cmds: Arg[][];
  text: string;
}

type Arg =
  | { k: 'field'; base: 'dot' | string; path: string[] }
  | { k: 'lit'; value: Value | undefined }
  | { k: 'ident'; name: string }
  | { k: 'pipe'; pipe: Pipe };

// ---- lexing and parsing -----------------------------------------------------------------------

interface Action {
  text: string;
  line: number;
}

function split(source: string): (string | Action)[] {
  const out: (string | Action)[] = [];
  let i = 0;
  let line = 1;
  while (i < source.length) {
    const open = source.indexOf('{{', i);
    if (open < 0) {
      out.push(source.slice(i));
      break;
    }
    let text = source.slice(i, open);
    const trimLeft = source.startsWith('{{- ', open) || source.startsWith('{{-\t', open) || source.startsWith('{{-\n', open);
    if (trimLeft) text = text.replace(/\s+$/, '');
    out.push(text);
    line += (source.slice(i, open).match(/\n/g) ?? []).length;
    const close = source.indexOf('}}', open + 2);
    if (close < 0) throw new TemplateError(`template: template:${line}: unclosed action`);
    let inner = source.slice(open + 2, close);
    if (trimLeft) inner = inner.slice(1);
    const trimRight = / -$/.test(inner) || /\t-$/.test(inner) || /\n-$/.test(inner);
    if (trimRight) inner = inner.slice(0, -1);
    out.push({ text: inner.trim(), line });
    line += (inner.match(/\n/g) ?? []).length;
    i = close + 2;
    if (trimRight) {
      const rest = /^\s*/.exec(source.slice(i))![0];
      line += (rest.match(/\n/g) ?? []).length;
      i += rest.length;
    }
  }
  return out;
}

function tokenize(text: string, line: number): string[] {
  const toks: string[] = [];
  const re = /\s*("(?:[^"\\]|\\.)*"|`[^`]*`|'(?:[^'\\]|\\.)'|:=|=|\||\(|\)|,|[^\s|(),=:]+)/gy;
  let m: RegExpExecArray | null;
  let pos = 0;
  while ((m = re.exec(text)) !== null) {
    toks.push(m[1]!);
    pos = re.lastIndex;
  }
  if (text.slice(pos).trim() !== '') throw new TemplateError(`template: template:${line}: unexpected "${text.slice(pos).trim()}" in command`);
  return toks;
}

function parsePipe(toks: string[], line: number, text: string): Pipe {
  let decl: string[] = [];
  const assign = toks.findIndex((t) => t === ':=' || t === '=');
  if (assign >= 0) {
    decl = toks.slice(0, assign).filter((t) => t !== ',');
    if (decl.some((d) => !d.startsWith('$'))) throw new TemplateError(`template: template:${line}: bad variable declaration`);
    toks = toks.slice(assign + 1);
  }
  const cmds: Arg[][] = [];
  let i = 0;
  const parseArgs = (stop: string | undefined): Arg[] => {
    const args: Arg[] = [];
    while (i < toks.length && toks[i] !== '|' && toks[i] !== stop) {
      const t = toks[i++]!;
      if (t === '(') {
        const start = i;
        let depth = 1;
        while (i < toks.length && depth > 0) {
          if (toks[i] === '(') depth++;
          else if (toks[i] === ')') depth--;
          i++;
        }
        if (depth !== 0) throw new TemplateError(`template: template:${line}: unclosed left paren`);
        args.push({ k: 'pipe', pipe: parsePipe(toks.slice(start, i - 1), line, text) });
      } else args.push(parseOperand(t, line));
    }
    return args;
  };
  while (i < toks.length) {
    const args = parseArgs(undefined);
    if (args.length === 0) throw new TemplateError(`template: template:${line}: missing value for command`);
    cmds.push(args);
    if (toks[i] === '|') i++;
  }
  return { decl, cmds, text };
}

function parseOperand(t: string, line: number): Arg {
  if (t === '.') return { k: 'field', base: 'dot', path: [] };
  if (t.startsWith('.')) return { k: 'field', base: 'dot', path: t.slice(1).split('.') };
  if (t.startsWith('$')) {
    const [v, ...path] = t.split('.');
    return { k: 'field', base: v!, path };
  }
  if (t.startsWith('"')) return { k: 'lit', value: JSON.parse(t) as string };
  if (t.startsWith('`')) return { k: 'lit', value: t.slice(1, -1) };
  if (t === 'true' || t === 'false') return { k: 'lit', value: t === 'true' };
  if (t === 'nil') return { k: 'lit', value: undefined };
  const n = num.parseNumberLoose(t);
  if (n !== undefined) return { k: 'lit', value: n };
  if (/^[A-Za-z_]\w*$/.test(t)) return { k: 'ident', name: t };
  throw new TemplateError(`template: template:${line}: unexpected "${t}" in operand`);
}

function parse(source: string): Node[] {
  const items = split(source);
  let i = 0;
  const block = (terminators: string[]): [Node[], string, Action | undefined] => {
    const nodes: Node[] = [];
    while (i < items.length) {
      const it = items[i++]!;
      if (typeof it === 'string') {
        if (it) nodes.push({ k: 'text', text: it });
        continue;
      }
      if (it.text.startsWith('/*')) continue;
      const word = /^\w+/.exec(it.text)?.[0] ?? '';
      if (terminators.includes(word)) return [nodes, word, it];
      if (word === 'if' || word === 'with' || word === 'range') {
        nodes.push(control(word, it));
        continue;
      }
      if (word === 'end' || word === 'else') throw new TemplateError(`template: template:${it.line}: unexpected {{${word}}}`);
      nodes.push({ k: 'action', pipe: parsePipe(tokenize(it.text, it.line), it.line, it.text), line: it.line });
    }
    if (terminators.length) throw new TemplateError('template: template: unexpected EOF');
    return [nodes, '', undefined];
  };
  const control = (word: 'if' | 'with' | 'range', it: Action): Node => {
    const rest = it.text.slice(word.length).trim();
    const pipe = parsePipe(tokenize(rest, it.line), it.line, rest);
    const [then, term, termAction] = block(['else', 'end']);
    let otherwise: Node[] = [];
    if (term === 'else') {
      const elseRest = termAction!.text.slice(4).trim();
      if (elseRest.startsWith('if ') && word === 'if') {
        otherwise = [control('if', { text: elseRest, line: termAction!.line })];
      } else {
        const [elseNodes] = block(['end']);
        otherwise = elseNodes;
      }
    }
    return { k: word, pipe, then, else: otherwise, line: it.line };
  };
  return block([])[0];
}

// ---- execution ----------------------------------------------------------------------------------

type Scope = Map<string, Value | undefined>;

function truthy(v: Value | undefined): boolean {
  if (v === undefined || v === null || v === false || v === '') return false;
  if (num.isNumber(v)) return num.sign(v) !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof RegoObject || v instanceof RegoSet) return v.size > 0;
  return true;
}

/** Go's fmt %v of the value as ast.As hands it to the template (maps sorted, slices spaced). */
function show(v: Value | undefined): string {
  if (v === undefined || v === null) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return String(v);
  if (num.isNumber(v)) return num.numberText(v);
  if (Array.isArray(v)) return '[' + v.map(show).join(' ') + ']';
  if (v instanceof RegoSet) return '[' + v.values().map(show).join(' ') + ']';
  return 'map[' + (v as RegoObject).entries().map(([k, w]) => `${show(k)}:${show(w)}`).join(' ') + ']';
}

function fmtArg(v: Value | undefined): FmtArg {
  if (typeof v === 'string') return { kind: 'string', value: v };
  if (v !== undefined && num.isNumber(v)) {
    const i = num.toBigInt(v);
    return i !== undefined ? { kind: 'int', value: i } : { kind: 'float', value: num.toFloat(v) };
  }
  return { kind: 'string', value: show(v) };
}

const FUNCS: Record<string, (args: (Value | undefined)[], line: number) => Value | undefined> = {
  and: (a) => a.find((x) => !truthy(x)) ?? a[a.length - 1],
  or: (a) => a.find((x) => truthy(x)) ?? a[a.length - 1],
  not: (a) => !truthy(a[0]),
  len: (a, line) => {
    const v = a[0];
    if (typeof v === 'string') return Buffer.byteLength(v);
    if (Array.isArray(v)) return v.length;
    if (v instanceof RegoObject || v instanceof RegoSet) return v.size;
    throw new TemplateError(`template: template:${line}: error calling len: len of type ${v === undefined ? 'nil' : typeName(v)}`);
  },
  index: (a, line) => {
    let cur = a[0];
    for (const key of a.slice(1)) {
      if (cur instanceof RegoObject) cur = cur.get(key ?? null) ?? undefined;
      else if (Array.isArray(cur) && typeof key === 'number') {
        if (key < 0 || key >= cur.length) throw new TemplateError(`template: template:${line}: error calling index: index out of range: ${key}`);
        cur = cur[key];
      } else throw new TemplateError(`template: template:${line}: error calling index: cannot index ${show(cur)}`);
    }
    return cur;
  },
  eq: (a) => a.slice(1).some((b) => a[0] !== undefined && b !== undefined && equals(a[0], b)),
  ne: (a) => !(a[0] !== undefined && a[1] !== undefined && equals(a[0], a[1])),
  lt: (a) => compare(a[0] ?? null, a[1] ?? null) < 0,
  le: (a) => compare(a[0] ?? null, a[1] ?? null) <= 0,
  gt: (a) => compare(a[0] ?? null, a[1] ?? null) > 0,
  ge: (a) => compare(a[0] ?? null, a[1] ?? null) >= 0,
  print: (a) => a.map(show).join(''),
  println: (a) => a.map(show).join(' ') + '\n',
  printf: (a) => goSprintf(typeof a[0] === 'string' ? a[0] : show(a[0]), a.slice(1).map(fmtArg)),
};

function execute(nodes: readonly Node[], dot: Value | undefined, scope: Scope, out: string[]): void {
  for (const n of nodes) {
    switch (n.k) {
      case 'text':
        out.push(n.text);
        break;
      case 'action': {
        const v = evalPipe(n.pipe, dot, scope, n.line);
        if (n.pipe.decl.length === 0) out.push(show(v));
        break;
      }
      case 'if':
      case 'with': {
        const inner = new Map(scope);
        const v = evalPipe(n.pipe, dot, inner, n.line);
        if (truthy(v)) execute(n.then, n.k === 'with' ? v : dot, inner, out);
        else execute(n.else, dot, inner, out);
        break;
      }
      case 'range': {
        const inner = new Map(scope);
        const v = evalPipe({ ...n.pipe, decl: [] }, dot, inner, n.line);
        const items: [Value, Value][] =
          v instanceof RegoObject
            ? v.entries().map(([k, w]) => [k, w])
            : Array.isArray(v)
              ? v.map((w, i) => [i, w])
              : v instanceof RegoSet
                ? v.values().map((w, i) => [i, w])
                : typeof v === 'number' && Number.isInteger(v)
                  ? Array.from({ length: Math.max(v, 0) }, (_, i) => [i, i])
                  : v === undefined || v === null
                    ? []
                    : (() => {
                        throw new TemplateError(`template: template:${n.line}: range can't iterate over ${show(v)}`);
                      })();
        if (items.length === 0) {
          execute(n.else, dot, inner, out);
          break;
        }
        for (const [k, w] of items) {
          if (n.pipe.decl.length === 1) inner.set(n.pipe.decl[0]!, w);
          if (n.pipe.decl.length === 2) {
            inner.set(n.pipe.decl[0]!, k);
            inner.set(n.pipe.decl[1]!, w);
          }
          execute(n.then, w, inner, out);
        }
        break;
      }
    }
  }
}

function evalPipe(p: Pipe, dot: Value | undefined, scope: Scope, line: number): Value | undefined {
  let prev: Value | undefined;
  let first = true;
  for (const cmd of p.cmds) {
    const extra = first ? [] : [prev];
    prev = evalCommand(cmd, extra, dot, scope, line, p.text);
    first = false;
  }
  for (const d of p.decl) scope.set(d, prev);
  return prev;
}

function evalCommand(
  cmd: readonly Arg[],
  piped: (Value | undefined)[],
  dot: Value | undefined,
  scope: Scope,
  line: number,
  text: string,
): Value | undefined {
  const head = cmd[0]!;
  if (head.k === 'ident') {
    const fn = FUNCS[head.name];
    if (!fn) throw new TemplateError(`template: template:${line}: function "${head.name}" not defined`);
    const args = cmd.slice(1).map((a) => evalArg(a, dot, scope, line, text));
    return fn([...args, ...piped], line);
  }
  if (cmd.length > 1 || piped.length > 0) throw new TemplateError(`template: template:${line}: can't give argument to non-function ${text}`);
  return evalArg(head, dot, scope, line, text);
}

function evalArg(a: Arg, dot: Value | undefined, scope: Scope, line: number, text: string): Value | undefined {
  switch (a.k) {
    case 'lit':
      return a.value;
    case 'pipe':
      return evalPipe(a.pipe, dot, new Map(scope), line);
    case 'ident':
      return evalCommand([a], [], dot, scope, line, text);
    case 'field': {
      let cur: Value | undefined;
      if (a.base === 'dot') cur = dot;
      else if (a.base === '$') cur = scope.get('$');
      else {
        if (!scope.has(a.base)) throw new TemplateError(`template: template:${line}: undefined variable "${a.base}"`);
        cur = scope.get(a.base);
      }
      for (const key of a.path) {
        if (!(cur instanceof RegoObject)) {
          throw new TemplateError(
            `template: template:${line}: executing "template" at <${text}>: can't evaluate field ${key} in type ${cur === undefined ? 'interface {}' : typeName(cur)}`,
          );
        }
        const next = cur.get(key);
        if (next === undefined)
          throw new TemplateError(`template: template:${line}: executing "template" at <${text}>: map has no entry for key "${key}"`);
        cur = next;
      }
      return cur;
    }
  }
}

export function renderTemplate(source: string, vars: RegoObject): string {
  const out: string[] = [];
  const scope: Scope = new Map([['$', vars]]);
  execute(parse(source), vars, scope, out);
  return out.join('');
}

export const templates = defineBuiltins({
  name: 'strings.render_template',
  decl: T.fn([T.string, anyObject], T.string),
  impl: ([source, vars]) => {
    try {
      return renderTemplate(str(source!), obj(vars!));
    } catch (e) {
      if (e instanceof TemplateError) throw new BuiltinError(e.message);
      throw e;
    }
  },
});

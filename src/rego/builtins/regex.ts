import { RE2JS, RE2JSException } from 're2js';
import { type Value } from '../value/index.js';
import { BuiltinError, defineBuiltins } from './registry.js';
import { intOperand, str } from './operands.js';
import { T } from './types.js';
import { globsIntersect } from './globintersect.js';

/**
 * Regular expressions with RE2 (Go) semantics through re2js — linear time, no backtracking, so a
 * user pattern cannot stall evaluation. Compiled patterns are shared by all evaluations (a
 * pattern's compilation does not depend on anything else) in a bounded cache.
 */

type RE2 = ReturnType<typeof RE2JS.compile>['re2Input'];

const CACHE_LIMIT = 1000;
const cache = new Map<string, RE2 | string>();

/** A compiled pattern, or throws BuiltinError with Go's parse error text. */
export function compileRegex(pattern: string): RE2 {
  const hit = cache.get(pattern);
  if (hit !== undefined) {
    if (typeof hit === 'string') throw new BuiltinError(hit);
    return hit;
  }
  let result: RE2 | string;
  try {
    result = RE2JS.compile(pattern).re2Input;
  } catch (e) {
    if (!(e instanceof RE2JSException)) throw e;
    result = e.message;
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(pattern, result);
  if (typeof result === 'string') throw new BuiltinError(result);
  return result;
}

function isValid(pattern: string): boolean {
  try {
    compileRegex(pattern);
    return true;
  } catch {
    return false;
  }
}

/** Go's Regexp.Split(s, -1). */
function split(re: RE2, s: string): string[] {
  if (s === '') return [''];
  const matches = re.findAllIndex(s, -1) as number[][] | null;
  const out: string[] = [];
  let beg = 0;
  let end = 0;
  for (const [start, stop] of matches ?? []) {
    end = start!;
    if (stop !== 0) out.push(s.slice(beg, end));
    beg = stop!;
  }
  if (end !== s.length) out.push(s.slice(beg));
  return out;
}

/** Go's ReplaceAllString: `$1`, `${1}`, `$name`, `${name}`, `$$` in the template. */
function replaceAll(re: RE2, src: string, template: string): string {
  const matches = (re.findAllSubmatchIndex(src, -1) as number[][] | null) ?? [];
  if (matches.length === 0) return src;
  const names = groupNames(re);
  let out = '';
  let last = 0;
  for (const m of matches) {
    out += src.slice(last, m[0]);
    out += expand(template, src, m, names);
    last = m[1]!;
  }
  return out + src.slice(last);
}

function groupNames(re: RE2): Record<string, number> {
  return ((re as unknown as { namedGroups?: Record<string, number> }).namedGroups ?? {}) as Record<string, number>;
}

function expand(template: string, src: string, m: readonly number[], names: Record<string, number>): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const dollar = template.indexOf('$', i);
    if (dollar < 0) {
      out += template.slice(i);
      break;
    }
    out += template.slice(i, dollar);
    i = dollar + 1;
    if (template[i] === '$') {
      out += '$';
      i++;
      continue;
    }
    let name: string | undefined;
    if (template[i] === '{') {
      const close = template.indexOf('}', i);
      const inner = close < 0 ? '' : template.slice(i + 1, close);
      if (close >= 0 && /^[A-Za-z0-9_]+$/.test(inner)) {
        name = inner;
        i = close + 1;
      }
    } else {
      const mm = /^[A-Za-z0-9_]+/.exec(template.slice(i));
      if (mm) {
        name = mm[0];
        i += name.length;
      }
    }
    if (name === undefined) {
      out += '$';
      continue;
    }
    const index = /^\d+$/.test(name) ? Number(name) : names[name];
    if (index === undefined || 2 * index + 1 >= m.length) continue;
    const start = m[2 * index]!;
    if (start >= 0) out += src.slice(start, m[2 * index + 1]);
  }
  return out;
}

/** Compiles a `regex.template_match` template: literal text with `{regex}` parts, anchored. */
function templateRegex(template: string, open: string, close: string): RE2 {
  let pattern = '^';
  let level = 0;
  let start = 0;
  let literalStart = 0;
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c === open) {
      if (level === 0) {
        pattern += RE2JS.quote(template.slice(literalStart, i));
        start = i + 1;
      }
      level++;
    } else if (c === close) {
      level--;
      if (level === 0) {
        pattern += '(' + template.slice(start, i) + ')';
        literalStart = i + 1;
      } else if (level < 0) throw new BuiltinError(`unbalanced braces in "${template}"`);
    }
  }
  if (level !== 0) throw new BuiltinError(`unbalanced braces in "${template}"`);
  pattern += RE2JS.quote(template.slice(literalStart)) + '$';
  return compileRegex(pattern);
}

export const regex = defineBuiltins(
  { name: 'regex.is_valid', decl: T.fn([T.any], T.boolean), impl: ([p]) => typeof p === 'string' && isValid(p) },
  {
    name: 'regex.match',
    decl: T.fn([T.string, T.string], T.boolean),
    impl: ([p, s]) => compileRegex(str(p!)).match(str(s!)) as boolean,
  },
  {
    name: 're_match',
    deprecated: true,
    decl: T.fn([T.string, T.string], T.boolean),
    impl: ([p, s]) => compileRegex(str(p!)).match(str(s!)) as boolean,
  },
  {
    name: 'regex.split',
    decl: T.fn([T.string, T.string], T.arrayOf(T.string)),
    impl: ([p, s]) => split(compileRegex(str(p!)), str(s!)),
  },
  {
    name: 'regex.find_n',
    decl: T.fn([T.string, T.string, T.number], T.arrayOf(T.string)),
    impl: ([p, s, n]) => {
      const limit = intOperand(n!, 3);
      return ((compileRegex(str(p!)).findAll(str(s!), limit) as string[] | null) ?? []) as Value[];
    },
  },
  {
    name: 'regex.find_all_string_submatch_n',
    decl: T.fn([T.string, T.string, T.number], T.arrayOf(T.arrayOf(T.string))),
    impl: ([p, s, n]) => {
      const limit = intOperand(n!, 3);
      const found = (compileRegex(str(p!)).findAllSubmatch(str(s!), limit) as (string | null)[][] | null) ?? [];
      return found.map((groups) => groups.map((g) => g ?? ''));
    },
  },
  {
    name: 'regex.replace',
    decl: T.fn([T.string, T.string, T.string], T.string),
    impl: ([s, p, v]) => replaceAll(compileRegex(str(p!)), str(s!), str(v!)),
  },
  {
    name: 'regex.template_match',
    decl: T.fn([T.string, T.string, T.string, T.string], T.boolean),
    impl: ([template, s, open, close]) => {
      const o = [...str(open!)][0] ?? '';
      const c = [...str(close!)][0] ?? '';
      return templateRegex(str(template!), o, c).match(str(s!)) as boolean;
    },
  },
  {
    name: 'regex.globs_match',
    decl: T.fn([T.string, T.string], T.boolean),
    impl: ([a, b]) => globsIntersect(str(a!), str(b!)),
  },
);

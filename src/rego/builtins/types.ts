import { RegoObject, RegoSet, typeName, type TypeName, type Value } from '../value/index.js';

/**
 * The type language of builtin declarations. The shape is OPA's capabilities JSON, so a declaration
 * prints as-is; the compiler uses it to check arity and argument types, the registry to check
 * operand kinds at run time.
 */
export type RegoType =
  | { readonly type: 'any'; readonly of?: readonly RegoType[] }
  | { readonly type: 'null' | 'boolean' | 'number' | 'string' }
  | { readonly type: 'array'; readonly static?: readonly RegoType[]; readonly dynamic?: RegoType }
  | {
      readonly type: 'object';
      readonly static?: readonly { readonly key: string; readonly value: RegoType }[];
      readonly dynamic?: { readonly key: RegoType; readonly value: RegoType };
    }
  | { readonly type: 'set'; readonly of: RegoType };

export interface FunctionDecl {
  readonly type: 'function';
  readonly args: readonly RegoType[];
  /** Extra arguments of this type may follow `args` (used by `print`). */
  readonly variadic?: RegoType;
  /** Absent for builtins that produce no value (`print`). */
  readonly result?: RegoType;
}

/** Constructors for declarations; `T.union(T.string, T.number)` prints as OPA's `any<…>`. */
export const T = {
  any: { type: 'any' } as RegoType,
  null: { type: 'null' } as RegoType,
  boolean: { type: 'boolean' } as RegoType,
  number: { type: 'number' } as RegoType,
  string: { type: 'string' } as RegoType,
  union: (...of: RegoType[]): RegoType => ({ type: 'any', of }),
  arrayOf: (of: RegoType): RegoType => ({ type: 'array', dynamic: of }),
  tuple: (...items: RegoType[]): RegoType => ({ type: 'array', static: items }),
  setOf: (of: RegoType): RegoType => ({ type: 'set', of }),
  objectOf: (key: RegoType, value: RegoType): RegoType => ({ type: 'object', dynamic: { key, value } }),
  record: (fields: Record<string, RegoType>, dynamic?: { key: RegoType; value: RegoType }): RegoType => ({
    type: 'object',
    static: Object.entries(fields).map(([key, value]) => ({ key, value })),
    ...(dynamic ? { dynamic } : {}),
  }),
  fn: (args: RegoType[], result: RegoType | undefined, variadic?: RegoType): FunctionDecl => ({
    type: 'function',
    args,
    ...(result ? { result } : {}),
    ...(variadic ? { variadic } : {}),
  }),
};

/** Shorthands used throughout the builtin tables. */
export const anyArray = T.arrayOf(T.any);
export const anySet = T.setOf(T.any);
export const anyObject = T.objectOf(T.any, T.any);
export const stringArray = T.arrayOf(T.string);
export const stringSet = T.setOf(T.string);
export const stringCollection = T.union(stringArray, stringSet);

/** The top-level kinds a type admits (`undefined` = every kind). */
export function kindsOf(t: RegoType): readonly TypeName[] | undefined {
  if (t.type === 'any') {
    if (!t.of) return undefined;
    const out: TypeName[] = [];
    for (const member of t.of) {
      const k = kindsOf(member);
      if (k === undefined) return undefined;
      for (const n of k) if (!out.includes(n)) out.push(n);
    }
    return out;
  }
  return [t.type];
}

/** Whether a value's top-level kind is admitted by a type (element types are not inspected). */
export function admitsKind(t: RegoType, v: Value): boolean {
  const kinds = kindsOf(t);
  return kinds === undefined || kinds.includes(typeName(v));
}

/** OPA's rendering of a type in messages: `string`, `array[number]`, `any<string, set[string]>`… */
export function typeToString(t: RegoType): string {
  switch (t.type) {
    case 'any':
      return t.of ? `any<${t.of.map(typeToString).join(', ')}>` : 'any';
    case 'array':
      if (t.static) {
        const items = t.static.map(typeToString).join(', ');
        return t.dynamic ? `array<${items}>[${typeToString(t.dynamic)}]` : `array<${items}>`;
      }
      return `array[${typeToString(t.dynamic ?? T.any)}]`;
    case 'set':
      return `set[${typeToString(t.of)}]`;
    case 'object': {
      const parts: string[] = [];
      if (t.static) parts.push(`object<${t.static.map((f) => `${f.key}: ${typeToString(f.value)}`).join(', ')}>`);
      if (t.dynamic) parts.push(`object[${typeToString(t.dynamic.key)}: ${typeToString(t.dynamic.value)}]`);
      return parts.length ? parts.join('') : 'object';
    }
    default:
      return t.type;
  }
}

/** Whether a value conforms to a type, element types included (used by tests and `with` checks). */
export function conforms(t: RegoType, v: Value): boolean {
  switch (t.type) {
    case 'any':
      return !t.of || t.of.some((m) => conforms(m, v));
    case 'null':
      return v === null;
    case 'boolean':
      return typeof v === 'boolean';
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeName(v) === 'number';
    case 'array': {
      if (!Array.isArray(v)) return false;
      const items = v as readonly Value[];
      const stat = t.static ?? [];
      if (!t.dynamic && items.length !== stat.length) return false;
      return items.every((item, i) => conforms(i < stat.length ? stat[i]! : (t.dynamic ?? T.any), item));
    }
    case 'set':
      return v instanceof RegoSet && v.values().every((m) => conforms(t.of, m));
    case 'object': {
      if (!(v instanceof RegoObject)) return false;
      for (const [k, w] of v.entries()) {
        const field = typeof k === 'string' ? t.static?.find((f) => f.key === k) : undefined;
        if (field) {
          if (!conforms(field.value, w)) return false;
        } else if (t.dynamic) {
          if (!conforms(t.dynamic.key, k) || !conforms(t.dynamic.value, w)) return false;
        } else if (t.static) return false;
      }
      return true;
    }
  }
}

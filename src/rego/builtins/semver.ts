import { BuiltinError, defineBuiltins } from './registry.js';
import { T } from './types.js';

/** Semantic Versioning 2.0.0 (no leading `v`), as OPA's semver builtins accept it. */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

interface Version {
  core: [bigint, bigint, bigint];
  pre: string[];
}

function parse(s: string): Version | undefined {
  const m = SEMVER.exec(s);
  if (!m) return undefined;
  return { core: [BigInt(m[1]!), BigInt(m[2]!), BigInt(m[3]!)], pre: m[4] ? m[4].split('.') : [] };
}

function compareIdentifiers(a: string, b: string): number {
  const an = /^\d+$/.test(a);
  const bn = /^\d+$/.test(b);
  if (an && bn) {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (an !== bn) return an ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a.core[i] !== b.core[i]) return a.core[i]! < b.core[i]! ? -1 : 1;
  if (a.pre.length === 0 || b.pre.length === 0) return a.pre.length === b.pre.length ? 0 : a.pre.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const c = compareIdentifiers(a.pre[i]!, b.pre[i]!);
    if (c !== 0) return c;
  }
  return a.pre.length === b.pre.length ? 0 : a.pre.length < b.pre.length ? -1 : 1;
}

export const semver = defineBuiltins(
  {
    name: 'semver.is_valid',
    decl: T.fn([T.any], T.boolean),
    impl: ([v]) => typeof v === 'string' && parse(v) !== undefined,
  },
  {
    name: 'semver.compare',
    decl: T.fn([T.string, T.string], T.number),
    impl: ([a, b]) => {
      const x = parse(a as string);
      if (!x) throw new BuiltinError(`operand 1: string ${JSON.stringify(a)} is not a valid SemVer`);
      const y = parse(b as string);
      if (!y) throw new BuiltinError(`operand 2: string ${JSON.stringify(b)} is not a valid SemVer`);
      return compareVersions(x, y);
    },
  },
);

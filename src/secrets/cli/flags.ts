/**
 * Go-style flags, as the Vault CLI takes them: `-name=value`, `-name value`, `--name=value`,
 * boolean `-name` / `-name=false`, repeatable flags, and `--` to end flags. Flags may appear
 * before, between or after arguments.
 */
import { UsageError } from '../../common/errors.js';

export type FlagKind = 'bool' | 'string' | 'strings' | 'int';

export interface FlagSpec {
  readonly name: string;
  readonly kind: FlagKind;
  readonly help: string;
  readonly aliases?: readonly string[];
  readonly default?: string | boolean | number;
}

export type FlagValues = Record<string, string | boolean | number | string[] | undefined>;

export interface Parsed {
  readonly flags: FlagValues;
  /** Flags the user gave explicitly. */
  readonly given: ReadonlySet<string>;
  readonly args: string[];
}

export function parseFlags(argv: readonly string[], specs: readonly FlagSpec[]): Parsed {
  const byName = new Map<string, FlagSpec>();
  for (const spec of specs) {
    byName.set(spec.name, spec);
    for (const alias of spec.aliases ?? []) byName.set(alias, spec);
  }
  const flags: FlagValues = {};
  const given = new Set<string>();
  for (const spec of specs) {
    if (spec.default !== undefined) flags[spec.name] = spec.default;
    else if (spec.kind === 'bool') flags[spec.name] = false;
    else if (spec.kind === 'strings') flags[spec.name] = [];
  }
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      args.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      args.push(arg);
      continue;
    }
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq === -1 ? body : body.slice(0, eq);
    const spec = byName.get(name);
    if (!spec) throw new UsageError(`flag provided but not defined: -${name}`);
    let value: string | undefined = eq === -1 ? undefined : body.slice(eq + 1);
    given.add(spec.name);
    if (spec.kind === 'bool') {
      if (value === undefined) flags[spec.name] = true;
      else if (/^(1|t|true|TRUE|True)$/.test(value)) flags[spec.name] = true;
      else if (/^(0|f|false|FALSE|False)$/.test(value)) flags[spec.name] = false;
      else throw new UsageError(`invalid boolean value ${JSON.stringify(value)} for -${name}`);
      continue;
    }
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`flag needs an argument: -${name}`);
      value = argv[++i]!;
    }
    if (spec.kind === 'strings') (flags[spec.name] as string[]).push(value);
    else if (spec.kind === 'int') {
      if (!/^-?\d+$/.test(value)) throw new UsageError(`invalid value ${JSON.stringify(value)} for -${name}: want an integer`);
      flags[spec.name] = Number(value);
    } else flags[spec.name] = value;
  }
  return { flags, given, args };
}

export function flagHelp(specs: readonly FlagSpec[]): string {
  return specs
    .map((s) => `  -${s.name}${s.kind === 'bool' ? '' : '=<' + (s.kind === 'int' ? 'int' : 'string') + '>'}${s.aliases?.length ? ` (also -${s.aliases.join(', -')})` : ''}\n      ${s.help}`)
    .join('\n');
}

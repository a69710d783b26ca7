/**
 * What the compiled modules define, read from their AST (OPA's AST JSON shape): the data path of
 * every rule, e.g. `['httpapi', 'authz', 'allow']`. The server needs it to tell "document missing"
 * from "document undefined", and to refuse base documents that would overlap a rule
 * ("conflicting rule for data path … found").
 */

interface TermJson { readonly type?: string; readonly value?: unknown }

/** A rule's path below `data`: the package path, then the head's leading constant ref segments. */
export function rulePaths(modules: Iterable<unknown>): string[][] {
  const paths: string[][] = [];
  const seen = new Set<string>();
  for (const module of modules) {
    const pkg = packagePath(module);
    if (!pkg) continue;
    for (const rule of rulesOf(module)) {
      const head = headPath(rule);
      if (!head) continue;
      const path = [...pkg, ...head];
      const key = path.join('\u0000');
      if (!seen.has(key)) {
        seen.add(key);
        paths.push(path);
      }
    }
  }
  return paths;
}

/** `data.x.y` → ['x','y']. */
export function packagePath(module: unknown): string[] | undefined {
  const path = (module as { package?: { path?: TermJson[] } } | undefined)?.package?.path;
  if (!Array.isArray(path)) return undefined;
  const out: string[] = [];
  for (const [i, term] of path.entries()) {
    if (i === 0 && term.type === 'var' && term.value === 'data') continue;
    if (typeof term.value !== 'string') return undefined;
    out.push(term.value);
  }
  return out;
}

function rulesOf(module: unknown): unknown[] {
  const rules = (module as { rules?: unknown[] }).rules;
  return Array.isArray(rules) ? rules : [];
}

function headPath(rule: unknown): string[] | undefined {
  const head = (rule as { head?: { name?: unknown; ref?: TermJson[] } }).head;
  if (!head) return undefined;
  if (Array.isArray(head.ref) && head.ref.length > 0) {
    const out: string[] = [];
    for (const [i, term] of head.ref.entries()) {
      if (i === 0 ? term.type !== 'var' : term.type !== 'string') break;
      if (typeof term.value !== 'string') break;
      out.push(term.value);
    }
    return out.length > 0 ? out : undefined;
  }
  return typeof head.name === 'string' ? [head.name] : undefined;
}

/** Is `path` exactly the path of some rule? (OPA's GetRulesForVirtualDocument is non-empty.) */
export function definesDocument(paths: readonly (readonly string[])[], path: readonly string[]): boolean {
  return paths.some((p) => p.length === path.length && p.every((s, i) => s === path[i]));
}

/** Every rule path under which `data` already holds a non-empty base document. */
export function conflictingPaths(paths: readonly (readonly string[])[], data: unknown): string[][] {
  const conflicts: string[][] = [];
  for (const path of paths) {
    let current: unknown = data;
    let clash = false;
    for (const [i, key] of path.entries()) {
      if (current === null || typeof current !== 'object' || Array.isArray(current)) break;
      if (!Object.hasOwn(current, key)) break;
      current = (current as Record<string, unknown>)[key];
      if (i === path.length - 1) clash = !(current !== null && typeof current === 'object' && !Array.isArray(current) && Object.keys(current).length === 0);
      else if (current === null || typeof current !== 'object' || Array.isArray(current)) {
        clash = true;
        break;
      }
    }
    if (clash) conflicts.push([...path]);
  }
  return conflicts;
}

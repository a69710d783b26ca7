/**
 * An ACL: the rules of a set of policies, compiled once and consulted per request.
 *
 * Rules of the same pattern in several policies are merged (capabilities and parameter lists
 * united; `deny` wins). For a path, an exact rule wins; for a list operation the exact rule
 * without the trailing slash is consulted next; otherwise, among the glob (`*` suffix) and
 * segment-wildcard (`+`) rules that match, the one of highest priority is used alone:
 * later first wildcard/glob, then not ending in `*`, then fewer `+`, then longer, then
 * lexicographically greater.
 */
import type { Operation } from '../logical.js';
import { Capability, capabilityNames, type ParameterValues, type PathRule, type Policy } from './policy.js';

interface Permissions {
  capabilities: number;
  allowed: Record<string, unknown[]>;
  denied: Record<string, unknown[]>;
  required: Set<string>;
  /** Parameter constraints were given somewhere (an empty allowed map still means "no constraint"). */
}

interface NonExactRule {
  readonly pattern: string;
  /** Pattern without the trailing `*`. */
  readonly base: string;
  readonly isPrefix: boolean;
  readonly segments: readonly string[] | undefined;
  readonly firstWildcard: number;
  readonly wildcards: number;
  readonly permissions: Permissions;
}

export interface AclDecision {
  readonly allowed: boolean;
  readonly sudo: boolean;
  readonly capabilities: number;
}

const OPERATION_CAPABILITY: Record<Exclude<Operation, 'help'>, number> = {
  create: Capability.create,
  read: Capability.read,
  update: Capability.update,
  delete: Capability.delete,
  list: Capability.list,
  patch: Capability.patch,
};

export class Acl {
  private readonly exact = new Map<string, Permissions>();
  private readonly nonExact: NonExactRule[] = [];
  readonly root: boolean;

  constructor(policies: readonly Policy[]) {
    this.root = policies.some((p) => p.name === 'root');
    const byPattern = new Map<string, Permissions>();
    for (const policy of policies) {
      for (const rule of policy.rules) {
        const existing = byPattern.get(rule.pattern);
        byPattern.set(rule.pattern, existing ? merge(existing, rule) : merge(empty(), rule));
      }
    }
    for (const [pattern, permissions] of byPattern) {
      const isPrefix = pattern.endsWith('*');
      const base = isPrefix ? pattern.slice(0, -1) : pattern;
      const hasPlus = base.split('/').includes('+');
      if (!isPrefix && !hasPlus) {
        this.exact.set(pattern, permissions);
        continue;
      }
      const plusIndex = hasPlus ? plusPosition(base) : -1;
      this.nonExact.push({
        pattern,
        base,
        isPrefix,
        segments: hasPlus ? base.split('/') : undefined,
        firstWildcard: plusIndex >= 0 ? plusIndex : base.length,
        wildcards: hasPlus ? base.split('/').filter((s) => s === '+').length : 0,
        permissions,
      });
    }
  }

  private permissionsFor(path: string, list: boolean): Permissions | undefined {
    const exact = this.exact.get(path);
    if (exact) return exact;
    if (list && path.endsWith('/')) {
      const bare = this.exact.get(path.slice(0, -1));
      if (bare) return bare;
    }
    let best: NonExactRule | undefined;
    for (const rule of this.nonExact) {
      if (!matches(rule, path)) continue;
      if (!best || higherPriority(rule, best)) best = rule;
    }
    return best?.permissions;
  }

  /** The capabilities of this ACL on `path`, as `sys/capabilities` reports them. */
  capabilities(path: string): string[] {
    if (this.root) return ['root'];
    const permissions = this.permissionsFor(path, true);
    if (!permissions || permissions.capabilities === 0) return ['deny'];
    return capabilityNames(permissions.capabilities);
  }

  /** Whether some rule grants anything (but deny) on a path below `prefix` (the UI's mount preflight). */
  hasRuleUnder(prefix: string): boolean {
    if (this.root) return true;
    const grants = (p: Permissions) => p.capabilities !== 0 && (p.capabilities & Capability.deny) === 0;
    for (const [pattern, p] of this.exact) if (pattern.startsWith(prefix) && grants(p)) return true;
    return this.nonExact.some((r) => (r.base.startsWith(prefix) || (r.isPrefix && prefix.startsWith(r.base))) && grants(r.permissions));
  }

  /** Whether `operation` on `path` with `data` is allowed; `sudo` tells whether the rule grants sudo. */
  allowOperation(operation: Exclude<Operation, 'help'>, path: string, data: Readonly<Record<string, unknown>>): AclDecision {
    if (this.root) return { allowed: true, sudo: true, capabilities: ~0 };
    const permissions = this.permissionsFor(path, operation === 'list');
    if (!permissions) return { allowed: false, sudo: false, capabilities: 0 };
    const bits = permissions.capabilities;
    const sudo = (bits & Capability.sudo) !== 0 && (bits & Capability.deny) === 0;
    if (bits & Capability.deny || (bits & OPERATION_CAPABILITY[operation]) === 0) return { allowed: false, sudo, capabilities: bits };
    if (operation === 'create' || operation === 'update' || operation === 'patch') {
      if (!parametersAllowed(permissions, data)) return { allowed: false, sudo, capabilities: bits };
    }
    return { allowed: true, sudo, capabilities: bits };
  }
}

function empty(): Permissions {
  return { capabilities: 0, allowed: {}, denied: {}, required: new Set() };
}

function merge(into: Permissions, rule: PathRule): Permissions {
  let capabilities = into.capabilities | rule.capabilities;
  if (capabilities & Capability.deny) capabilities = Capability.deny;
  const unite = (a: Record<string, unknown[]>, b: Readonly<Record<string, ParameterValues>>) => {
    const out = { ...a };
    for (const [k, v] of Object.entries(b)) {
      // An empty list means "any value"; it absorbs specific values.
      out[k] = k in out && (out[k]!.length === 0 || v.length === 0) ? [] : [...(out[k] ?? []), ...v];
    }
    return out;
  };
  return {
    capabilities,
    allowed: unite(into.allowed, rule.allowedParameters),
    denied: unite(into.denied, rule.deniedParameters),
    required: new Set([...into.required, ...rule.requiredParameters]),
  };
}

function plusPosition(base: string): number {
  const segments = base.split('/');
  let offset = 0;
  for (const segment of segments) {
    if (segment === '+') return offset;
    offset += segment.length + 1;
  }
  return -1;
}

function matches(rule: NonExactRule, path: string): boolean {
  if (!rule.segments) return path.startsWith(rule.base);
  const parts = path.split('/');
  const segments = rule.segments;
  if (!rule.isPrefix && parts.length !== segments.length) return false;
  if (rule.isPrefix && parts.length < segments.length) return false;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if (i === segments.length - 1 && rule.isPrefix) {
      if (segment !== '+' && !part.startsWith(segment)) return false;
    } else if (segment !== '+' && part !== segment) {
      return false;
    }
  }
  return true;
}

function higherPriority(a: NonExactRule, b: NonExactRule): boolean {
  if (a.firstWildcard !== b.firstWildcard) return a.firstWildcard > b.firstWildcard;
  if (a.isPrefix !== b.isPrefix) return !a.isPrefix;
  if (a.wildcards !== b.wildcards) return a.wildcards < b.wildcards;
  if (a.base.length !== b.base.length) return a.base.length > b.base.length;
  return a.pattern > b.pattern;
}

function parametersAllowed(permissions: Permissions, data: Readonly<Record<string, unknown>>): boolean {
  const allowedKeys = Object.keys(permissions.allowed);
  const deniedKeys = Object.keys(permissions.denied);
  if (allowedKeys.length === 0 && deniedKeys.length === 0 && permissions.required.size === 0) return true;
  const lowered = new Map(Object.entries(data).map(([k, v]) => [k.toLowerCase(), v]));
  for (const name of permissions.required) if (!lowered.has(name)) return false;
  if (lowered.size === 0) return true;
  if (deniedKeys.length > 0) {
    if ('*' in permissions.denied) return false;
    for (const [name, value] of lowered) {
      const denied = permissions.denied[name];
      if (denied && valueInList(value, denied)) return false;
    }
  }
  if (allowedKeys.length === 0) return true;
  const allowAll = '*' in permissions.allowed;
  if (allowedKeys.length === 1 && allowAll) return true;
  for (const [name, value] of lowered) {
    const allowed = permissions.allowed[name];
    if (!allowed && !allowAll) return false;
    if (allowed && !valueInList(value, allowed)) return false;
  }
  return true;
}

/** An empty list holds every value; strings match with a leading or trailing `*` glob. */
function valueInList(value: unknown, list: readonly unknown[]): boolean {
  if (list.length === 0) return true;
  const values = Array.isArray(value) ? value : [value];
  return values.every((v) => list.some((item) => sameValue(v, item)));
}

function sameValue(value: unknown, item: unknown): boolean {
  if (typeof item === 'string' && typeof value === 'string') {
    if (item === '*') return true;
    if (item.endsWith('*') && value.startsWith(item.slice(0, -1))) return true;
    if (item.startsWith('*') && value.endsWith(item.slice(1))) return true;
    return value === item;
  }
  return JSON.stringify(value) === JSON.stringify(item) || String(value) === String(item);
}

/**
 * ACL policy documents (HCL or JSON): `path "<pattern>" { capabilities = [...] }` with optional
 * `allowed_parameters`, `denied_parameters`, `required_parameters`, and the legacy
 * `policy = "read" | "write" | "sudo" | "deny"`.
 */
import { InvalidRequestError } from '../errors.js';
import { parseHcl, bodyToObject, HclSyntaxError, type HclValue } from '../hcl.js';

export const Capability = {
  deny: 1,
  create: 1 << 1,
  read: 1 << 2,
  update: 1 << 3,
  delete: 1 << 4,
  list: 1 << 5,
  sudo: 1 << 6,
  patch: 1 << 7,
  subscribe: 1 << 8,
  recover: 1 << 9,
} as const;
export type CapabilityName = keyof typeof Capability;

const LEGACY: Record<string, CapabilityName[]> = {
  deny: ['deny'],
  read: ['read', 'list'],
  write: ['create', 'read', 'update', 'delete', 'list', 'patch'],
  sudo: ['create', 'read', 'update', 'delete', 'list', 'patch', 'sudo'],
};

/** Capability names of a bitmap, sorted as Vault prints them. */
export function capabilityNames(bits: number): string[] {
  if (bits & Capability.deny) return ['deny'];
  return (Object.keys(Capability) as CapabilityName[]).filter((name) => bits & Capability[name]).sort();
}

export type ParameterValues = readonly unknown[];

export interface PathRule {
  /** The pattern as written, e.g. `secret/+/config*`. */
  readonly pattern: string;
  readonly capabilities: number;
  readonly allowedParameters: Readonly<Record<string, ParameterValues>>;
  readonly deniedParameters: Readonly<Record<string, ParameterValues>>;
  readonly requiredParameters: readonly string[];
}

export interface Policy {
  readonly name: string;
  /** The document as the user wrote it. */
  readonly raw: string;
  readonly rules: readonly PathRule[];
}

export class PolicyParseError extends InvalidRequestError {
  constructor(detail: string) {
    super(`failed to parse policy: ${detail}`);
    this.name = 'PolicyParseError';
  }
}

type Obj = { [key: string]: HclValue };

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parsePolicy(name: string, raw: string): Policy {
  let paths: Array<[string, Obj]> = [];
  const text = raw.trim();
  if (text.startsWith('{')) {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (error) {
      throw new PolicyParseError((error as Error).message);
    }
    if (!isObject(doc)) throw new PolicyParseError('the document must be an object');
    for (const [key, value] of Object.entries(doc)) {
      if (key !== 'path' && key !== 'name') throw new PolicyParseError(`invalid key ${JSON.stringify(key)}`);
    }
    const pathValue = doc.path ?? {};
    const entries = Array.isArray(pathValue) ? pathValue.flatMap((p) => (isObject(p) ? Object.entries(p) : [])) : isObject(pathValue) ? Object.entries(pathValue) : [];
    for (const [pattern, body] of entries) {
      if (!isObject(body)) throw new PolicyParseError(`path ${JSON.stringify(pattern)}: expected an object`);
      paths.push([pattern, body]);
    }
  } else {
    try {
      const body = parseHcl(raw);
      for (const key of Object.keys(body.attributes)) {
        if (key !== 'name') throw new PolicyParseError(`invalid key ${JSON.stringify(key)} on line 1`);
      }
      for (const block of body.blocks) {
        if (block.type !== 'path') throw new PolicyParseError(`invalid key ${JSON.stringify(block.type)} on line ${block.line}`);
        if (block.labels.length !== 1) throw new PolicyParseError(`path block on line ${block.line} needs exactly one pattern`);
        paths.push([block.labels[0]!, bodyToObject(block.body)]);
      }
    } catch (error) {
      if (error instanceof HclSyntaxError) throw new PolicyParseError(error.message);
      throw error;
    }
  }
  paths = paths.map(([pattern, body]) => [pattern.replace(/^\/+/, ''), body]);
  return { name, raw, rules: paths.map(([pattern, body]) => parseRule(pattern, body)) };
}

const RULE_KEYS = new Set([
  'capabilities', 'policy', 'allowed_parameters', 'denied_parameters', 'required_parameters',
  'min_wrapping_ttl', 'max_wrapping_ttl', 'mfa_methods', 'control_group', 'comment', 'subscribe_event_types',
]);

function parseRule(pattern: string, body: Obj): PathRule {
  const where = `path ${JSON.stringify(pattern)}`;
  for (const key of Object.keys(body)) if (!RULE_KEYS.has(key)) throw new PolicyParseError(`${where}: invalid key ${JSON.stringify(key)}`);
  if (pattern.includes('*') && pattern.indexOf('*') !== pattern.length - 1) {
    throw new PolicyParseError(`${where}: the glob * may only appear at the end of a path`);
  }
  let bits = 0;
  if (body.policy !== undefined) {
    const legacy = typeof body.policy === 'string' ? LEGACY[body.policy.toLowerCase()] : undefined;
    if (!legacy) throw new PolicyParseError(`${where}: invalid policy ${JSON.stringify(body.policy)}`);
    for (const cap of legacy) bits |= Capability[cap];
  }
  if (body.capabilities !== undefined) {
    if (!Array.isArray(body.capabilities)) throw new PolicyParseError(`${where}: capabilities must be a list`);
    for (const cap of body.capabilities) {
      if (typeof cap !== 'string' || !(cap.toLowerCase() in Capability)) throw new PolicyParseError(`${where}: invalid capability ${JSON.stringify(cap)}`);
      bits |= Capability[cap.toLowerCase() as CapabilityName];
    }
  }
  if (bits & Capability.deny) bits = Capability.deny;
  return {
    pattern,
    capabilities: bits,
    allowedParameters: parameters(where, 'allowed_parameters', body.allowed_parameters),
    deniedParameters: parameters(where, 'denied_parameters', body.denied_parameters),
    requiredParameters: stringList(where, 'required_parameters', body.required_parameters),
  };
}

function parameters(where: string, key: string, value: HclValue | undefined): Record<string, ParameterValues> {
  if (value === undefined || value === null) return {};
  const maps = Array.isArray(value) ? value : [value];
  const out: Record<string, ParameterValues> = {};
  for (const map of maps) {
    if (!isObject(map)) throw new PolicyParseError(`${where}: ${key} must be a map of lists`);
    for (const [name, values] of Object.entries(map)) {
      const list = values === null ? [] : Array.isArray(values) ? values : [values];
      out[name.toLowerCase()] = [...(out[name.toLowerCase()] ?? []), ...list];
    }
  }
  return out;
}

function stringList(where: string, key: string, value: HclValue | undefined): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new PolicyParseError(`${where}: ${key} must be a list of strings`);
  return (value as string[]).map((v) => v.toLowerCase());
}

/** Vault's built-in `default` policy: what every token may do with itself. */
export const DEFAULT_POLICY = `# Every token gets this policy unless created with no_default_policy.
# It lets a token see and manage itself; edit it to grant more to everyone.

# Look up the token's own properties
path "auth/token/lookup-self" {
    capabilities = ["read"]
}

# Renew the token's own lease
path "auth/token/renew-self" {
    capabilities = ["update"]
}

# Revoke the token itself
path "auth/token/revoke-self" {
    capabilities = ["update"]
}

# See the token's own capabilities on a path
path "sys/capabilities-self" {
    capabilities = ["update"]
}

# Read the token's own entity, by id and by name
path "identity/entity/id/{{identity.entity.id}}" {
  capabilities = ["read"]
}
path "identity/entity/name/{{identity.entity.name}}" {
  capabilities = ["read"]
}

# The resultant ACL of the token, used by the UI
path "sys/internal/ui/resultant-acl" {
    capabilities = ["read"]
}

# Renew and look up leases (legacy and current paths)
path "sys/renew" {
    capabilities = ["update"]
}
path "sys/leases/renew" {
    capabilities = ["update"]
}
path "sys/leases/lookup" {
    capabilities = ["update"]
}

# The token's private cubbyhole
path "cubbyhole/*" {
    capabilities = ["create", "read", "update", "delete", "list"]
}

# Response wrapping
path "sys/wrapping/wrap" {
    capabilities = ["update"]
}
path "sys/wrapping/lookup" {
    capabilities = ["update"]
}
path "sys/wrapping/unwrap" {
    capabilities = ["update"]
}

# Hashing helpers
path "sys/tools/hash" {
    capabilities = ["update"]
}
path "sys/tools/hash/*" {
    capabilities = ["update"]
}

# Control-group requests
path "sys/control-group/request" {
    capabilities = ["update"]
}

# Identity provider authorization
path "identity/oidc/provider/+/authorize" {
    capabilities = ["read", "update"]
}
`;

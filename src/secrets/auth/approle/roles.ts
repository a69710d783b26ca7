/**
 * AppRole roles: what is stored, how a write is validated, how a read looks, and the table of
 * single-field endpoints (`role/<name>/policies`, `…/secret-id-ttl`, …) that read, set or reset
 * one property each.
 *
 *   role/<lower-cased name>     → RoleEntry
 *   role_id/<HMAC(role id)>     → { name }   (the login lookup; the role ID is not a secret, but
 *                                             indexing by HMAC keeps the layout uniform)
 */
import { InvalidRequestError } from '../../errors.js';
import type { FieldData, FieldSchema, FieldSchemas } from '../../framework/fields.js';
import { parseCidrList } from '../shared/cidr.js';
import { defaultTokenParams, tokenFields, tokenParamsData, updateTokenParams, type TokenParams } from '../shared/token-params.js';

export interface RoleEntry {
  name: string;
  roleId: string;
  bindSecretId: boolean;
  secretIdBoundCidrs: string[];
  /** 0 = unlimited. */
  secretIdNumUses: number;
  /** Seconds; 0 = secret IDs never expire. */
  secretIdTtl: number;
  localSecretIds: boolean;
  token: TokenParams;
  /** `bound_cidr_list` (the older name of `secret_id_bound_cidrs`) was used: echo it on read. */
  legacyBoundCidrList: boolean;
}

/** Vault's GenericNameRegex. */
export const ROLE_NAME = String.raw`(?<role_name>\w(?:[\w.-]*\w)?)`;

export function roleFieldSchemas(): FieldSchemas {
  return {
    role_name: { type: 'lowercase-string', description: 'Name of the role (case-insensitive).' },
    bind_secret_id: { type: 'bool', default: true, description: 'Require a secret ID at login.' },
    secret_id_bound_cidrs: { type: 'comma-string-slice', deprecatedAlias: 'bound_cidr_list', description: 'CIDRs a login with a secret ID may come from.' },
    secret_id_num_uses: { type: 'int', description: 'Logins per secret ID (0: unlimited).' },
    secret_id_ttl: { type: 'duration', description: 'Lifetime of secret IDs (0: no expiry).' },
    local_secret_ids: { type: 'bool', description: 'Secret IDs are local to this cluster (create-time only).' },
    role_id: { type: 'string', description: 'A role ID to use instead of a generated one.' },
    ...tokenFields(['policies', 'period']),
  };
}

export function newRole(name: string, roleId: string): RoleEntry {
  return {
    name,
    roleId,
    bindSecretId: true,
    secretIdBoundCidrs: [],
    secretIdNumUses: 0,
    secretIdTtl: 0,
    localSecretIds: false,
    token: defaultTokenParams(),
    legacyBoundCidrList: false,
  };
}

/** Apply a `role/<name>` write (only the fields sent) and validate the result. */
export function applyRoleWrite(role: RoleEntry, fields: FieldData, creating: boolean, maxLeaseTtl: number): RoleEntry {
  const next: RoleEntry = { ...role, token: updateTokenParams(fields, role.token) };
  if (fields.has('bind_secret_id')) next.bindSecretId = fields.bool('bind_secret_id');
  if (fields.has('secret_id_bound_cidrs')) {
    next.secretIdBoundCidrs = parseCidrList(fields.strings('secret_id_bound_cidrs'), 'secret_id_bound_cidrs');
    next.legacyBoundCidrList = fields.usedAlias('secret_id_bound_cidrs');
  }
  if (fields.has('secret_id_num_uses')) next.secretIdNumUses = fields.int('secret_id_num_uses');
  if (fields.has('secret_id_ttl')) next.secretIdTtl = fields.duration('secret_id_ttl');
  if (fields.has('local_secret_ids')) {
    if (!creating) throw new InvalidRequestError('local_secret_ids can only be modified during role creation');
    next.localSecretIds = fields.bool('local_secret_ids');
  }
  validateRole(next, maxLeaseTtl);
  return next;
}

export function validateRole(role: RoleEntry, maxLeaseTtl: number): void {
  if (role.secretIdNumUses < 0) throw new InvalidRequestError('secret_id_num_uses cannot be negative');
  if (!role.bindSecretId && role.secretIdBoundCidrs.length === 0 && role.token.boundCidrs.length === 0) {
    throw new InvalidRequestError('at least one constraint should be enabled on the role');
  }
  if (maxLeaseTtl > 0 && role.token.maxTtl > maxLeaseTtl) {
    throw new InvalidRequestError(`token_max_ttl cannot be greater than the mount's max TTL (${maxLeaseTtl}s)`);
  }
}

/** The `data` of `GET role/<name>`. */
export function roleData(role: RoleEntry): Record<string, unknown> {
  const data: Record<string, unknown> = {
    bind_secret_id: role.bindSecretId,
    local_secret_ids: role.localSecretIds,
    secret_id_bound_cidrs: role.secretIdBoundCidrs.map(displayCidr),
    secret_id_num_uses: role.secretIdNumUses,
    secret_id_ttl: role.secretIdTtl,
    ...tokenParamsData(role.token),
  };
  if (role.legacyBoundCidrList) data.bound_cidr_list = data.secret_id_bound_cidrs;
  return data;
}

/**
 * One single-property endpoint `role/<name>/<segment>`: GET returns `read(role)`, POST applies the
 * field, DELETE resets it to its default.
 */
export interface RoleProperty {
  readonly segment: string;
  /** The field a POST sets (`fields` declares it). */
  readonly field: string;
  readonly fields: FieldSchemas;
  readonly read: (role: RoleEntry) => Record<string, unknown>;
  /** Return the role with the field from a POST applied, or with the default after a DELETE (`fields` undefined). */
  readonly apply: (role: RoleEntry, fields: FieldData | undefined) => RoleEntry;
  /** GET only. */
  readonly readOnly?: boolean;
}

function tokenProperty(segment: string, field: string, legacy?: 'policies' | 'period'): RoleProperty {
  const schemas = tokenFields(legacy ? [legacy] : []);
  const schema: FieldSchema = schemas[field]!;
  return {
    segment,
    field,
    fields: { [field]: schema },
    read: (role) => {
      const data = tokenParamsData(role.token);
      const out: Record<string, unknown> = { [field]: data[field] };
      if (legacy) out[legacy] = data[field];
      return out;
    },
    apply: (role, fields) => {
      if (fields) return { ...role, token: updateTokenParams(fields, role.token) };
      const token = { ...role.token };
      const defaults = defaultTokenParams();
      const prop = TOKEN_PROPERTY[field]!;
      (token as Record<string, unknown>)[prop] = (defaults as unknown as Record<string, unknown>)[prop];
      token.legacy = token.legacy.filter((l) => l !== legacy);
      return { ...role, token };
    },
  };
}

const TOKEN_PROPERTY: Record<string, keyof TokenParams> = {
  token_policies: 'policies',
  token_ttl: 'ttl',
  token_max_ttl: 'maxTtl',
  token_period: 'period',
  token_num_uses: 'numUses',
  token_bound_cidrs: 'boundCidrs',
};

function roleProperty(
  segment: string,
  field: string,
  schema: FieldSchema,
  get: (role: RoleEntry) => unknown,
  set: (role: RoleEntry, fields: FieldData | undefined) => Partial<RoleEntry>,
  alias?: string,
): RoleProperty {
  return {
    segment,
    field,
    fields: { [field]: schema },
    read: (role) => (alias ? { [field]: get(role), [alias]: get(role) } : { [field]: get(role) }),
    apply: (role, fields) => ({ ...role, ...set(role, fields) }),
  };
}

export const ROLE_PROPERTIES: readonly RoleProperty[] = [
  tokenProperty('policies', 'token_policies', 'policies'),
  tokenProperty('period', 'token_period', 'period'),
  tokenProperty('token-ttl', 'token_ttl'),
  tokenProperty('token-max-ttl', 'token_max_ttl'),
  tokenProperty('token-num-uses', 'token_num_uses'),
  tokenProperty('token-bound-cidrs', 'token_bound_cidrs'),
  roleProperty('secret-id-num-uses', 'secret_id_num_uses', { type: 'int' }, (r) => r.secretIdNumUses, (_r, f) => ({
    secretIdNumUses: f ? f.int('secret_id_num_uses') : 0,
  })),
  roleProperty('secret-id-ttl', 'secret_id_ttl', { type: 'duration' }, (r) => r.secretIdTtl, (_r, f) => ({
    secretIdTtl: f ? f.duration('secret_id_ttl') : 0,
  })),
  roleProperty('bind-secret-id', 'bind_secret_id', { type: 'bool' }, (r) => r.bindSecretId, (_r, f) => ({
    bindSecretId: f ? f.bool('bind_secret_id') : true,
  })),
  roleProperty('secret-id-bound-cidrs', 'secret_id_bound_cidrs', { type: 'comma-string-slice' }, (r) => r.secretIdBoundCidrs.map(displayCidr), (_r, f) => ({
    secretIdBoundCidrs: f ? parseCidrList(f.strings('secret_id_bound_cidrs'), 'secret_id_bound_cidrs') : [],
    legacyBoundCidrList: false,
  })),
  roleProperty('bound-cidr-list', 'bound_cidr_list', { type: 'comma-string-slice' }, (r) => r.secretIdBoundCidrs.map(displayCidr), (_r, f) => ({
    secretIdBoundCidrs: f ? parseCidrList(f.strings('bound_cidr_list'), 'bound_cidr_list') : [],
    legacyBoundCidrList: f !== undefined,
  })),
  { ...roleProperty('local-secret-ids', 'local_secret_ids', { type: 'bool' }, (r) => r.localSecretIds, () => ({})), readOnly: true },
];

function displayCidr(cidr: string): string {
  return cidr.endsWith('/32') && !cidr.includes(':') ? cidr.slice(0, -3) : cidr;
}

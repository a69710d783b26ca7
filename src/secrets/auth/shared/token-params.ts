/**
 * The token parameters every auth method stores with its principals (a userpass user, an AppRole
 * role, the idp/LDAP config) and copies into the `Auth` of each login: Vault's `token_*` fields,
 * with the older names some clients still send (`policies`, `ttl`, `max_ttl`, `period`,
 * `bound_cidrs`). Shared by the userpass, approle, idp and ldap methods.
 *
 * When a value was written under its older name, reads echo it under that name too, as Vault does
 * (node-vault's `addApproleRole` sends `policies` and `period`).
 */
import { InvalidRequestError } from '../../errors.js';
import type { FieldData, FieldSchemas } from '../../framework/fields.js';
import type { Auth } from '../../logical.js';
import { parseCidrList } from './cidr.js';

export interface TokenParams {
  policies: string[];
  ttl: number;
  maxTtl: number;
  explicitMaxTtl: number;
  period: number;
  numUses: number;
  noDefaultPolicy: boolean;
  boundCidrs: string[];
  /** `default`, `service`, `batch`, `default-service`, `default-batch`. */
  type: string;
  /** Older field names the current values were written under, echoed on read. */
  legacy: LegacyName[];
}

export type LegacyName = 'policies' | 'ttl' | 'max_ttl' | 'period' | 'bound_cidrs';

const LEGACY_OF: Record<LegacyName, string> = {
  policies: 'token_policies',
  ttl: 'token_ttl',
  max_ttl: 'token_max_ttl',
  period: 'token_period',
  bound_cidrs: 'token_bound_cidrs',
};

const TOKEN_TYPES = ['default', 'service', 'batch', 'default-service', 'default-batch'];

export function defaultTokenParams(): TokenParams {
  return { policies: [], ttl: 0, maxTtl: 0, explicitMaxTtl: 0, period: 0, numUses: 0, noDefaultPolicy: false, boundCidrs: [], type: 'default', legacy: [] };
}

/** The `token_*` field schemas, accepting the given older names as aliases. */
export function tokenFields(legacy: readonly LegacyName[] = []): FieldSchemas {
  const alias = (name: LegacyName) => (legacy.includes(name) ? { deprecatedAlias: name } : {});
  return {
    token_policies: { type: 'comma-string-slice', description: 'Policies of the tokens issued.', ...alias('policies') },
    token_ttl: { type: 'duration', description: 'Initial TTL of the tokens issued.', ...alias('ttl') },
    token_max_ttl: { type: 'duration', description: 'Maximum lifetime of the tokens issued.', ...alias('max_ttl') },
    token_explicit_max_ttl: { type: 'duration', description: 'Hard cap on the lifetime, over any other setting.' },
    token_period: { type: 'duration', description: 'Makes the tokens periodic with this period.', ...alias('period') },
    token_num_uses: { type: 'int', description: 'Uses per token (0: unlimited).' },
    token_no_default_policy: { type: 'bool', description: 'Do not add the default policy.' },
    token_bound_cidrs: { type: 'comma-string-slice', description: 'CIDRs the tokens may be used from.', ...alias('bound_cidrs') },
    token_type: { type: 'string', default: 'default', description: 'service, batch, or default.' },
  };
}

/**
 * Apply the provided fields on top of `current` (a create starts from the defaults): fields not
 * sent keep their value. Invalid values are 400s with Vault's messages.
 */
export function updateTokenParams(fields: FieldData, current: TokenParams = defaultTokenParams()): TokenParams {
  const next: TokenParams = { ...current, policies: [...current.policies], boundCidrs: [...current.boundCidrs], legacy: [...current.legacy] };
  const touched = (field: string, legacyName?: LegacyName) => {
    if (!fields.has(field)) return false;
    if (legacyName) {
      next.legacy = next.legacy.filter((l) => l !== legacyName);
      if (fields.usedAlias(field)) next.legacy.push(legacyName);
    }
    return true;
  };
  if (touched('token_policies', 'policies')) next.policies = fields.strings('token_policies');
  if (touched('token_ttl', 'ttl')) next.ttl = fields.duration('token_ttl');
  if (touched('token_max_ttl', 'max_ttl')) next.maxTtl = fields.duration('token_max_ttl');
  if (touched('token_explicit_max_ttl')) next.explicitMaxTtl = fields.duration('token_explicit_max_ttl');
  if (touched('token_period', 'period')) next.period = fields.duration('token_period');
  if (touched('token_num_uses')) next.numUses = fields.int('token_num_uses');
  if (touched('token_no_default_policy')) next.noDefaultPolicy = fields.bool('token_no_default_policy');
  if (touched('token_bound_cidrs', 'bound_cidrs')) next.boundCidrs = parseCidrList(fields.strings('token_bound_cidrs'), 'token_bound_cidrs');
  if (touched('token_type')) next.type = fields.string('token_type');

  if (!TOKEN_TYPES.includes(next.type)) throw new InvalidRequestError(`invalid 'token_type' value ${JSON.stringify(next.type)}`);
  if (next.numUses < 0) throw new InvalidRequestError('token_num_uses cannot be negative');
  if (next.maxTtl > 0 && next.ttl > next.maxTtl) throw new InvalidRequestError("'token_ttl' cannot be greater than 'token_max_ttl'");
  if (next.type === 'batch' && next.period > 0) throw new InvalidRequestError("'token_type' cannot be 'batch' when set to generate periodic tokens");
  if (next.type === 'batch' && next.numUses > 0) throw new InvalidRequestError("'token_type' cannot be 'batch' when set to generate tokens with limited use count");
  if (next.type === 'batch' && next.explicitMaxTtl > 0) throw new InvalidRequestError("'token_type' cannot be 'batch' when set to generate tokens with an explicit max TTL");
  return next;
}

/** The fields as a read returns them (durations in seconds), plus the legacy names in use. */
export function tokenParamsData(params: TokenParams): Record<string, unknown> {
  const data: Record<string, unknown> = {
    token_bound_cidrs: params.boundCidrs.map(displayCidr),
    token_explicit_max_ttl: params.explicitMaxTtl,
    token_max_ttl: params.maxTtl,
    token_no_default_policy: params.noDefaultPolicy,
    token_num_uses: params.numUses,
    token_period: params.period,
    token_policies: params.policies,
    token_ttl: params.ttl,
    token_type: params.type,
  };
  for (const name of params.legacy) {
    const value = data[LEGACY_OF[name]];
    data[name] = value;
  }
  return data;
}

/** The token part of a login's `Auth`. */
export function tokenAuth(params: TokenParams): Omit<Auth, 'displayName'> {
  return {
    policies: params.policies,
    ttl: params.ttl,
    maxTtl: params.maxTtl,
    explicitMaxTtl: params.explicitMaxTtl,
    period: params.period,
    numUses: params.numUses,
    noDefaultPolicy: params.noDefaultPolicy,
    boundCidrs: params.boundCidrs,
    tokenType: params.type,
  };
}

/** Single hosts read back as written (`10.0.0.1`), blocks as CIDRs. */
function displayCidr(cidr: string): string {
  return cidr.endsWith('/32') && !cidr.includes(':') ? cidr.slice(0, -3) : cidr.endsWith('/128') ? cidr.slice(0, -4) : cidr;
}

/**
 * Whether two policy lists grant the same thing, as a renewal check needs: compared as sets of
 * lower-cased names, ignoring `default` (the core adds it).
 */
export function equivalentPolicies(a: readonly string[], b: readonly string[]): boolean {
  const norm = (list: readonly string[]) =>
    [...new Set(list.map((p) => p.trim().toLowerCase()).filter((p) => p !== '' && p !== 'default'))].sort().join(',');
  return norm(a) === norm(b);
}

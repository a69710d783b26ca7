/** Output of the secrets CLI: Vault's `Key  Value` tables and `-format=json`. */
import { formatDurationSeconds } from '../../common/duration.js';

/** Seconds as the Vault CLI prints them: `768h`, `20m`, `1h30m`, `45s`, `0s`. */
export function humanDuration(seconds: number): string {
  let text = formatDurationSeconds(seconds);
  if (text.endsWith('m0s')) text = text.slice(0, -2);
  if (text.endsWith('h0m')) text = text.slice(0, -2);
  return text;
}

/** Go's `%v` of a JSON value. */
export function goValue(value: unknown): string {
  if (value === null || value === undefined) return 'n/a';
  if (Array.isArray(value)) return `[${value.map(goValue).join(' ')}]`;
  if (typeof value === 'object') {
    return `map[${Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}:${goValue(v)}`).join(' ')}]`;
  }
  return String(value);
}

/** Go's `%q` of a string slice: `["default" "web"]`. */
export function quotedList(values: unknown): string {
  return `[${(Array.isArray(values) ? values : []).map((v) => JSON.stringify(String(v))).join(' ')}]`;
}

export function table(rows: ReadonlyArray<readonly [string, string]>, header: readonly [string, string] = ['Key', 'Value']): string {
  const width = Math.max(header[0].length, ...rows.map(([k]) => k.length));
  const line = (k: string, v: string) => `${k.padEnd(width)}    ${v}`.trimEnd();
  return [line(header[0], header[1]), line('-'.repeat(header[0].length), '-'.repeat(header[1].length)), ...rows.map(([k, v]) => line(k, v))].join('\n') + '\n';
}

export function warningsBlock(warnings: unknown): string {
  if (!Array.isArray(warnings) || warnings.length === 0) return '';
  return `WARNING! The following warnings were returned from Vault:\n\n${warnings.map((w) => `  * ${w}`).join('\n\n')}\n\n`;
}

/** Vault's CLI prints a field that looks like a duration (`ttl`, `*_ttl`, `period`, `*_period`) as one: `secret_id_ttl 0s`. */
function looksLikeDuration(key: string): boolean {
  return key === 'ttl' || key.endsWith('_ttl') || key === 'period' || key.endsWith('_period');
}

/** A response with `auth` or `data`, printed as the Vault CLI does. */
export function formatSecret(body: Record<string, unknown> | undefined): string {
  if (!body) return '';
  let out = warningsBlock(body.warnings);
  const auth = body.auth as Record<string, unknown> | null | undefined;
  if (auth) {
    const duration = Number(auth.lease_duration ?? 0);
    const rows: Array<[string, string]> = [
      ['token', String(auth.client_token ?? '')],
      ['token_accessor', String(auth.accessor ?? '')],
      ['token_duration', duration === 0 ? '∞' : humanDuration(duration)],
      ['token_renewable', String(auth.renewable ?? false)],
      ['token_policies', quotedList(auth.token_policies ?? [])],
      ['identity_policies', quotedList(auth.identity_policies ?? [])],
      ['policies', quotedList(auth.policies ?? [])],
    ];
    for (const [k, v] of Object.entries((auth.metadata as Record<string, unknown> | null) ?? {})) rows.push([`token_meta_${k}`, goValue(v)]);
    return out + table(rows);
  }
  const data = body.data as Record<string, unknown> | null | undefined;
  if (!data) return out;
  const rows: Array<[string, string]> = [];
  const lease = Number(body.lease_duration ?? 0);
  if (lease > 0) rows.push([body.renewable ? 'lease_duration' : 'refresh_interval', humanDuration(lease)]);
  for (const key of Object.keys(data).sort()) {
    const value = data[key];
    rows.push([key, looksLikeDuration(key) && typeof value === 'number' ? humanDuration(value) : goValue(value)]);
  }
  return out + table(rows);
}

export function formatList(keys: unknown): string {
  const list = Array.isArray(keys) ? keys.map(String) : [];
  return ['Keys', '----', ...list].join('\n') + '\n';
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/**
 * The engine's configuration, in OPA's own keys: a YAML/JSON config file (`-c`) overlaid with
 * `--set a.b.c=value` overrides, exactly as `opa run` combines them. The raw object is what
 * `GET /v1/config` reports; `resolveConfig` reads the keys the engine acts on.
 */
import { parse as parseYaml } from 'yaml';
import { UsageError } from '../common/errors.js';

export type ConfigObject = Record<string, unknown>;

export interface PolicyConfig {
  /** The document `POST /` evaluates, as a slash path (OPA's `default_decision`). */
  readonly defaultDecision: readonly string[];
  /** The document `--authorization=basic` evaluates (OPA's `default_authorization_decision`). */
  readonly defaultAuthorizationDecision: readonly string[];
  /** `decision_logs.console`: write every decision to standard output as a JSON line. */
  readonly decisionLogsConsole: boolean;
  /** `server.decoding.max_length`: largest accepted request body, in bytes. */
  readonly maxBodyBytes: number;
  /** `server.decoding.gzip.max_length`: largest accepted body after gzip decompression, in bytes. */
  readonly maxGzipBytes: number;
  /** `labels`: reported by `GET /v1/status` (`id` and `version` are always added). */
  readonly labels: Readonly<Record<string, string>>;
}

export const DEFAULT_DECISION = '/system/main';
export const DEFAULT_AUTHORIZATION_DECISION = '/system/authz/allow';
const DEFAULT_MAX_BODY = 256 * 1024 * 1024; // OPA's server.decoding.max_length default (256 MiB)
const DEFAULT_MAX_GZIP = 256 * 1024 * 1024; // OPA's server.decoding.gzip.max_length default

/** Parse a config file's text (YAML, of which JSON is a subset). */
export function parseConfigText(text: string, source: string): ConfigObject {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new UsageError(`config file ${source}: ${(error as Error).message.split('\n')[0]}`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`config file ${source}: want a mapping at the top level`);
  return value as ConfigObject;
}

/**
 * Apply one `--set KEY=VALUE` (dotted key; the value is a YAML scalar, so `true` is a boolean and
 * `10` a number, as OPA's strvals parser does; `a,b` is not split). Returns a new object.
 */
export function applySet(config: ConfigObject, assignment: string): ConfigObject {
  const eq = assignment.indexOf('=');
  if (eq <= 0) throw new UsageError(`--set ${JSON.stringify(assignment)}: want KEY=VALUE`);
  const keys = assignment.slice(0, eq).split('.');
  if (keys.some((k) => k === '')) throw new UsageError(`--set ${JSON.stringify(assignment)}: empty key segment`);
  const raw = assignment.slice(eq + 1);
  let value: unknown = raw;
  if (/^(true|false|null|-?\d+(\.\d+)?)$/.test(raw)) value = JSON.parse(raw);
  return setIn(config, keys, value);
}

function setIn(object: ConfigObject, keys: readonly string[], value: unknown): ConfigObject {
  const [head, ...rest] = keys as [string, ...string[]];
  if (rest.length === 0) return { ...object, [head]: value };
  const child = object[head];
  const base = child !== null && typeof child === 'object' && !Array.isArray(child) ? (child as ConfigObject) : {};
  return { ...object, [head]: setIn(base, rest, value) };
}

export function resolveConfig(raw: ConfigObject): PolicyConfig {
  return {
    defaultDecision: decisionPath(raw.default_decision ?? DEFAULT_DECISION, 'default_decision'),
    defaultAuthorizationDecision: decisionPath(raw.default_authorization_decision ?? DEFAULT_AUTHORIZATION_DECISION, 'default_authorization_decision'),
    decisionLogsConsole: truthy(get(raw, ['decision_logs', 'console'])),
    maxBodyBytes: positiveInt(get(raw, ['server', 'decoding', 'max_length']), DEFAULT_MAX_BODY, 'server.decoding.max_length'),
    maxGzipBytes: positiveInt(get(raw, ['server', 'decoding', 'gzip', 'max_length']), DEFAULT_MAX_GZIP, 'server.decoding.gzip.max_length'),
    labels: stringMap(raw.labels),
  };
}

/** The config as `GET /v1/config` shows it: defaults filled in, credentials left out. */
export function reportedConfig(raw: ConfigObject): ConfigObject {
  const shown = structuredClone(raw);
  shown.default_decision ??= DEFAULT_DECISION;
  shown.default_authorization_decision ??= DEFAULT_AUTHORIZATION_DECISION;
  const services = shown.services;
  if (services && typeof services === 'object') {
    for (const service of Object.values(services as Record<string, unknown>)) {
      if (service && typeof service === 'object') delete (service as ConfigObject).credentials;
    }
  }
  delete shown.keys;
  return shown;
}

/** `/system/main`, `system/main` and `system.main` all name data.system.main. */
export function decisionPath(value: unknown, key: string): string[] {
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`${key}: want a path such as /system/main`);
  const separator = value.includes('/') ? '/' : '.';
  return value.split(separator).filter((s) => s !== '');
}

function get(object: ConfigObject, keys: readonly string[]): unknown {
  let current: unknown = object;
  for (const key of keys) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as ConfigObject)[key];
  }
  return current;
}

function truthy(value: unknown): boolean {
  return value === true || value === 'true';
}

function positiveInt(value: unknown, fallback: number, key: string): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) throw new UsageError(`${key}: want a positive number of bytes`);
  return n;
}

function stringMap(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object') return {};
  return Object.fromEntries(Object.entries(value as ConfigObject).map(([k, v]) => [k, String(v)]));
}

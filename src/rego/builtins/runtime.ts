import { RegoObject, RegoSet, fromJSON, num, toRegoText, type Value } from '../value/index.js';
import { parseModule } from '../syntax/parser.js';
import { BuiltinError, OperandTypeError, UnsupportedBuiltinError, defineBuiltins } from './registry.js';
import { obj, str } from './operands.js';
import { T, anyArray, anyObject, anySet } from './types.js';

/**
 * Conversions, the deprecated casts, and builtins that reach outside the evaluation: the runtime,
 * tracing, the Rego compiler (through host hooks) and the network (not supported: they fail with
 * a clear error instead of being silently undefined).
 */

const GO_FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function toNumber(v: Value): Value {
  if (v === null) return 0;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (num.isNumber(v)) return v;
  const s = v as string;
  const n = GO_FLOAT.test(s) ? num.parseNumberLoose(s) : undefined;
  if (n === undefined) throw new BuiltinError(`strconv.ParseFloat: parsing ${JSON.stringify(s)}: invalid syntax`);
  return n;
}

const HTTP_KEYS = new Set([
  'method',
  'url',
  'body',
  'enable_redirect',
  'force_json_decode',
  'force_yaml_decode',
  'headers',
  'raw_body',
  'tls_use_system_certs',
  'tls_ca_cert',
  'tls_ca_cert_file',
  'tls_ca_cert_env_variable',
  'tls_client_cert',
  'tls_client_cert_file',
  'tls_client_cert_env_variable',
  'tls_client_key',
  'tls_client_key_file',
  'tls_client_key_env_variable',
  'tls_insecure_skip_verify',
  'tls_server_name',
  'timeout',
  'cache',
  'force_cache',
  'force_cache_duration_seconds',
  'raise_error',
  'caching_mode',
  'max_retry_attempts',
  'cache_ignored_headers',
]);

function checkHttpRequest(req: RegoObject): void {
  const invalid = new RegoSet(req.keys().filter((k) => typeof k !== 'string' || !HTTP_KEYS.has(k)));
  if (invalid.size) throw new OperandTypeError(`invalid request parameters(s): ${toRegoText(invalid)}`);
  const missing = new RegoSet(['method', 'url'].filter((k) => !req.has(k)));
  if (missing.size) throw new OperandTypeError(`missing required request parameters(s): ${toRegoText(missing)}`);
}

const unsupported = (what: string) => (): never => {
  throw new UnsupportedBuiltinError(what);
};

export const conversions = defineBuiltins(
  {
    name: 'to_number',
    decl: T.fn([T.union(T.null, T.boolean, T.number, T.string)], T.number),
    impl: ([v]) => toNumber(v as Value),
  },
  {
    name: 'cast_array',
    deprecated: true,
    decl: T.fn([T.any], anyArray),
    impl: ([v]) => {
      if (Array.isArray(v)) return v;
      if (v instanceof RegoSet) return [...v.values()];
      throw new OperandTypeError(1, ['array', 'set'], v as Value);
    },
  },
  {
    name: 'cast_set',
    deprecated: true,
    decl: T.fn([T.any], anySet),
    impl: ([v]) => {
      if (Array.isArray(v)) return new RegoSet(v);
      if (v instanceof RegoSet) return v;
      throw new OperandTypeError(1, ['array', 'set'], v as Value);
    },
  },
  { name: 'cast_string', deprecated: true, decl: T.fn([T.string], T.string), impl: ([v]) => v },
  { name: 'cast_boolean', deprecated: true, decl: T.fn([T.boolean], T.boolean), impl: ([v]) => v },
  { name: 'cast_null', deprecated: true, decl: T.fn([T.null], T.null), impl: () => null },
  { name: 'cast_object', deprecated: true, decl: T.fn([anyObject], anyObject), impl: ([v]) => v },
);

export const runtime = defineBuiltins(
  {
    name: 'opa.runtime',
    nondeterministic: true,
    decl: T.fn([], T.objectOf(T.string, T.any)),
    impl: (_args, ctx) => {
      const out = ctx.runtime instanceof RegoObject ? ctx.runtime.copy() : new RegoObject();
      const env = new RegoObject();
      for (const [k, v] of Object.entries(ctx.env)) if (v !== undefined) env.set(k, v);
      return out.set('env', env);
    },
  },
  {
    name: 'trace',
    decl: T.fn([T.string], T.boolean),
    impl: ([note], ctx) => {
      ctx.hooks?.trace?.(str(note!));
      return true;
    },
  },
  {
    name: 'rego.parse_module',
    decl: T.fn([T.string, T.string], anyObject),
    impl: ([file, source], ctx) => {
      const hook = ctx.hooks?.parseModule;
      if (hook) return hook(str(file!), str(source!));
      try {
        return fromJSON(JSON.parse(JSON.stringify(parseModule(str(file!), str(source!), 'v1'))));
      } catch (e) {
        if (e instanceof Error && typeof (e as { code?: unknown }).code === 'string') throw new BuiltinError(e.message);
        throw e;
      }
    },
  },
  {
    name: 'rego.metadata.chain',
    decl: T.fn([], T.arrayOf(T.any)),
    impl: (_args, ctx) => {
      const chain = ctx.hooks?.metadataChain;
      if (!chain) throw new UnsupportedBuiltinError('rego.metadata.chain is resolved by the compiler, which did not');
      return chain();
    },
  },
  {
    name: 'rego.metadata.rule',
    decl: T.fn([], T.any),
    impl: (_args, ctx) => {
      const rule = ctx.hooks?.metadataRule;
      if (!rule) throw new UnsupportedBuiltinError('rego.metadata.rule is resolved by the compiler, which did not');
      return rule();
    },
  },
  {
    name: 'http.send',
    nondeterministic: true,
    decl: T.fn([T.objectOf(T.string, T.any)], anyObject),
    impl: ([req]) => {
      checkHttpRequest(obj(req!));
      throw new UnsupportedBuiltinError('http.send needs network access, which this evaluator does not perform');
    },
  },
  {
    name: 'providers.aws.sign_req',
    decl: T.fn([anyObject, anyObject, T.number], anyObject),
    unsupported: 'providers.aws.sign_req is not implemented',
    impl: unsupported('providers.aws.sign_req is not implemented'),
  },
  ...(['graphql.parse', 'graphql.parse_and_verify'] as const).map((name) => ({
    name,
    decl: T.fn([T.union(T.string, anyObject), T.union(T.string, anyObject)], anyArray),
    unsupported: `${name} is not implemented`,
    impl: unsupported(`${name} is not implemented`),
  })),
  ...(
    [
      ['crypto.x509.parse_and_verify_certificates_with_options', [T.string, anyObject], T.tuple(T.boolean, T.arrayOf(anyObject))],
      ['crypto.x509.parse_certificate_request', [T.string], anyObject],
      ['crypto.x509.parse_keypair', [T.string, T.string], anyObject],
      ['crypto.parse_private_keys', [T.string], T.arrayOf(anyObject)],
      ['json.verify_schema', [T.union(T.string, anyObject)], T.tuple(T.boolean, T.union(T.null, T.string))],
      ['json.match_schema', [T.union(T.string, anyObject), T.union(T.string, anyObject)], T.tuple(T.boolean, anyArray)],
    ] as const
  ).map(([name, args, result]) => ({
    name,
    decl: T.fn([...args], result),
    unsupported: `${name} is not implemented`,
    impl: unsupported(`${name} is not implemented`),
  })),
  {
    name: 'graphql.parse_query',
    decl: T.fn([T.string], anyObject),
    unsupported: 'graphql.parse_query is not implemented',
    impl: unsupported('graphql.parse_query is not implemented'),
  },
  {
    name: 'graphql.parse_schema',
    decl: T.fn([T.string], anyObject),
    unsupported: 'graphql.parse_schema is not implemented',
    impl: unsupported('graphql.parse_schema is not implemented'),
  },
  {
    name: 'graphql.is_valid',
    decl: T.fn([T.union(T.string, anyObject), T.union(T.string, anyObject)], T.boolean),
    unsupported: 'graphql.is_valid is not implemented',
    impl: unsupported('graphql.is_valid is not implemented'),
  },
  {
    name: 'graphql.schema_is_valid',
    decl: T.fn([T.union(T.string, anyObject)], T.boolean),
    unsupported: 'graphql.schema_is_valid is not implemented',
    impl: unsupported('graphql.schema_is_valid is not implemented'),
  },
);


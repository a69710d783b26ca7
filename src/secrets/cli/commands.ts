/**
 * `portcullis secrets …`: the Vault CLI's commands, as one table of (words, flags, run). Flags are
 * Go-style (`-format=json`, `-method=userpass`, `-force`), parsed by flags.ts for this whole subtree.
 */
import { readFile } from 'node:fs/promises';
import { CommandError, UsageError } from '../../common/errors.js';
import { decodeToken } from '../seal/otp.js';
import { randomBase62 } from '../token/store.js';
import { ApiError, Client, readTokenHelper, writeTokenHelper, type ApiResponse } from './client.js';
import { flagHelp, parseFlags, type FlagSpec, type FlagValues } from './flags.js';
import { formatList, formatSecret, json, table, warningsBlock } from './format.js';
import { promptHidden, readStdin } from './prompt.js';
import { runServer, SERVER_FLAGS } from './server-command.js';

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** Standard input (prompts, `-` arguments); default process.stdin. */
  readonly stdin?: NodeJS.ReadStream;
}

export interface Context {
  readonly flags: FlagValues;
  readonly given: ReadonlySet<string>;
  readonly args: string[];
  readonly io: Io;
  readonly json: boolean;
  client(): Promise<Client>;
  /** Print a response body: JSON as is with -format=json, else `table`. */
  print(body: unknown, table: () => string): void;
}

export interface CommandSpec {
  readonly words: readonly string[];
  readonly summary: string;
  readonly usage: string;
  readonly flags?: readonly FlagSpec[];
  /** Does not talk to a server (no address/token flags). */
  readonly local?: boolean;
  run(context: Context): Promise<void>;
}

const GLOBAL_FLAGS: readonly FlagSpec[] = [
  { name: 'address', kind: 'string', help: 'address of the server (default $SECRETS_ADDR, $VAULT_ADDR, http://127.0.0.1:8200)' },
  { name: 'token', kind: 'string', help: 'token to use (default $SECRETS_TOKEN, $VAULT_TOKEN, then the token helper file)' },
  { name: 'format', kind: 'string', help: 'output format: table or json', default: '' },
  { name: 'ca-cert', kind: 'string', help: 'CA certificate file to verify the server (default $VAULT_CACERT)' },
  { name: 'tls-skip-verify', kind: 'bool', help: 'do not verify the server certificate (default $VAULT_SKIP_VERIFY)' },
  { name: 'namespace', kind: 'string', help: 'ignored (namespaces are an enterprise feature)', aliases: ['ns'] },
];

const FIELD: FlagSpec = { name: 'field', kind: 'string', help: 'print only this field, raw' };

function need(args: readonly string[], count: number, usage: string): void {
  if (args.length < count) throw new UsageError(`not enough arguments (expected ${count}, got ${args.length})\nUsage: ${usage}`);
}

function tooMany(args: readonly string[], count: number, usage: string): void {
  if (args.length > count) throw new UsageError(`too many arguments (expected ${count}, got ${args.length})\nUsage: ${usage}`);
}

/** `k=v`, `k=@file`, `k=-` (stdin), or a lone `-` for a JSON object on stdin. */
async function parseData(args: readonly string[], stdin?: NodeJS.ReadStream): Promise<Record<string, unknown>> {
  if (args.length === 1 && args[0] === '-') {
    const text = await readStdin(stdin);
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch (error) {
      throw new UsageError(`failed to parse JSON input: ${(error as Error).message}`);
    }
  }
  const data: Record<string, unknown> = {};
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new UsageError(`invalid key/value pair ${JSON.stringify(arg)}: format must be key=value`);
    const key = arg.slice(0, eq);
    let value: string = arg.slice(eq + 1);
    if (value.startsWith('@')) value = await readFile(value.slice(1), 'utf8').catch(() => {
      throw new UsageError(`error loading file ${value.slice(1)}`);
    });
    else if (value === '-') value = (await readStdin(stdin)).replace(/\n$/, '');
    const existing = data[key];
    if (existing === undefined) data[key] = value;
    else data[key] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return data;
}

function field(body: Record<string, unknown> | undefined, name: string): string {
  const data = (body?.data ?? {}) as Record<string, unknown>;
  const auth = (body?.auth ?? {}) as Record<string, unknown>;
  const authFields: Record<string, unknown> = {
    token: auth.client_token, token_accessor: auth.accessor, token_duration: auth.lease_duration, token_renewable: auth.renewable,
    token_policies: auth.token_policies, identity_policies: auth.identity_policies, policies: auth.policies,
  };
  const value = name in authFields && body?.auth ? authFields[name] : data[name];
  if (value === undefined) throw new CommandError(`Field "${name}" not present in secret`, 1);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function secretOutput(ctx: Context, response: ApiResponse): void {
  const name = ctx.flags.field as string | undefined;
  if (name) {
    ctx.io.out(field(response.body, name) + '\n');
    return;
  }
  ctx.print(response.body, () => formatSecret(response.body));
}

function sealStatusTable(status: Record<string, unknown>): string {
  const rows: Array<[string, string]> = [
    ['Seal Type', String(status.type ?? 'shamir')],
    ['Initialized', String(status.initialized)],
    ['Sealed', String(status.sealed)],
    ['Total Shares', String(status.n)],
    ['Threshold', String(status.t)],
  ];
  if (status.sealed) {
    rows.push(['Unseal Progress', `${status.progress}/${status.t}`], ['Unseal Nonce', String(status.nonce || 'n/a')]);
  }
  rows.push(['Version', String(status.version)], ['Build Date', String(status.build_date)], ['Storage Type', String(status.storage_type)]);
  if (status.cluster_name) rows.push(['Cluster Name', String(status.cluster_name)], ['Cluster ID', String(status.cluster_id)]);
  rows.push(['HA Enabled', 'false']);
  return table(rows);
}

function generateRootTable(status: Record<string, unknown>): string {
  const rows: Array<[string, string]> = [
    ['Nonce', String(status.nonce || 'n/a')],
    ['Started', String(status.started)],
    ['Progress', `${status.progress}/${status.required}`],
    ['Complete', String(status.complete)],
  ];
  if (status.pgp_fingerprint) rows.push(['PGP Fingerprint', String(status.pgp_fingerprint)]);
  if (status.encoded_token) rows.push(['Encoded Token', String(status.encoded_token)]);
  if (status.otp) rows.push(['OTP', String(status.otp)]);
  if (status.otp_length) rows.push(['OTP Length', String(status.otp_length)]);
  return table(rows);
}

/** `sys/internal/ui/mounts` preflight of `kv` commands: the mount path and KV version of `path`. */
async function kvMount(client: Client, path: string, mountFlag?: string): Promise<{ mount: string; rest: string; version: number }> {
  if (mountFlag) {
    const mount = mountFlag.replace(/\/*$/, '/');
    const info = await client.read(`sys/internal/ui/mounts/${mount}`).catch(() => undefined);
    const version = (info?.body?.data as { options?: { version?: string } } | undefined)?.options?.version === '2' ? 2 : 1;
    return { mount, rest: path.replace(/^\/+/, ''), version };
  }
  const clean = path.replace(/^\/+/, '');
  try {
    const info = await client.read(`sys/internal/ui/mounts/${clean}`);
    const data = info.body?.data as { path?: string; options?: { version?: string } | null } | undefined;
    const mount = data?.path ?? '';
    return { mount, rest: clean.startsWith(mount) ? clean.slice(mount.length) : clean, version: data?.options?.version === '2' ? 2 : 1 };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return { mount: '', rest: clean, version: 1 };
    throw error;
  }
}

function lookupAsAuth(token: string, data: Record<string, unknown>): Record<string, unknown> {
  return {
    auth: {
      client_token: token,
      accessor: data.accessor,
      policies: data.policies,
      token_policies: data.policies,
      identity_policies: data.identity_policies ?? [],
      metadata: data.meta,
      lease_duration: data.ttl,
      renewable: data.renewable ?? false,
    },
  };
}

const TOKEN_CREATE_FLAGS: readonly FlagSpec[] = [
  { name: 'policy', kind: 'strings', help: 'a policy to attach (repeatable)' },
  { name: 'ttl', kind: 'string', help: 'initial TTL, e.g. 20m' },
  { name: 'period', kind: 'string', help: 'make a periodic token renewed for this period' },
  { name: 'type', kind: 'string', help: 'service or batch' },
  { name: 'orphan', kind: 'bool', help: 'create a token without a parent' },
  { name: 'role', kind: 'string', help: 'create the token from this token role' },
  { name: 'renewable', kind: 'bool', help: 'allow the token to be renewed', default: true },
  { name: 'display-name', kind: 'string', help: 'name for the token' },
  { name: 'use-limit', kind: 'int', help: 'number of uses before the token is revoked (0: unlimited)' },
  { name: 'metadata', kind: 'strings', help: 'key=value metadata (repeatable)' },
  { name: 'no-default-policy', kind: 'bool', help: 'do not attach the default policy' },
  { name: 'explicit-max-ttl', kind: 'string', help: 'hard limit on the token lifetime' },
  { name: 'id', kind: 'string', help: 'a custom token value (root/sudo only)' },
  { name: 'entity-alias', kind: 'string', help: 'entity alias to associate (with -role)' },
  FIELD,
];

export const COMMANDS: readonly CommandSpec[] = [
  {
    words: ['server'],
    summary: 'run the secrets server (-dev for an in-memory development server)',
    usage: 'portcullis secrets server -config FILE | -dev [-dev-root-token-id ID] [-dev-listen-address HOST:PORT]',
    flags: SERVER_FLAGS,
    local: true,
    run: (ctx) => runServer(ctx.flags, ctx.io),
  },
  {
    words: ['status'],
    summary: 'print the seal status',
    usage: 'portcullis secrets status',
    async run(ctx) {
      const client = await ctx.client();
      const response = await client.read('sys/seal-status');
      ctx.print(response.body, () => sealStatusTable(response.body ?? {}));
      if (response.body?.sealed) throw new CommandError('the server is sealed', 2);
    },
  },
  {
    words: ['login'],
    summary: 'authenticate and store the token in the token helper',
    usage: 'portcullis secrets login [-method=token|userpass|ldap|okta|idp|approle] [-path=P] [TOKEN | K=V...]',
    flags: [
      { name: 'method', kind: 'string', help: 'auth method type', default: 'token' },
      { name: 'path', kind: 'string', help: 'mount path of the auth method (default: the method name)' },
      { name: 'no-store', kind: 'bool', help: 'do not store the token in the token helper' },
      { name: 'token-only', kind: 'bool', help: 'print only the token' },
      FIELD,
    ],
    async run(ctx) {
      const method = String(ctx.flags.method);
      const mount = String(ctx.flags.path || method).replace(/^\/+|\/+$/g, '');
      let client = await ctx.client();
      let body: Record<string, unknown>;
      if (method === 'token') {
        const token = ctx.args[0] === undefined || ctx.args[0] === '-' ? await promptHidden('Token (will be hidden): ', ctx.io.stdin, ctx.io.err) : ctx.args[0];
        if (!token) throw new UsageError('a token is required');
        const response = await client.withToken(token).read('auth/token/lookup-self');
        body = lookupAsAuth(token, (response.body?.data ?? {}) as Record<string, unknown>);
      } else {
        const data = await parseData(ctx.args, ctx.io.stdin);
        if (method === 'approle') {
          body = (await client.withToken(undefined).write(`auth/${mount}/login`, data)).body ?? {};
        } else if (['userpass', 'ldap', 'okta', 'idp', 'radius'].includes(method)) {
          const username = data.username;
          if (typeof username !== 'string' || !username) throw new UsageError('username=NAME is required');
          delete data.username;
          if (data.password === undefined) data.password = await promptHidden('Password (will be hidden): ', ctx.io.stdin, ctx.io.err);
          body = (await client.withToken(undefined).write(`auth/${mount}/login/${encodeURIComponent(username)}`, data)).body ?? {};
        } else {
          throw new UsageError(`unknown auth method: ${method}; use token, userpass, ldap, okta, idp or approle`);
        }
      }
      const auth = body.auth as Record<string, unknown> | undefined;
      if (!auth?.client_token) throw new CommandError('the server returned no token', 2);
      client = client.withToken(String(auth.client_token));
      if (!ctx.flags['no-store']) await writeTokenHelper(String(auth.client_token), ctx.io.env);
      if (ctx.flags['token-only']) {
        ctx.io.out(`${auth.client_token}\n`);
        return;
      }
      if (ctx.flags.field) {
        ctx.io.out(field(body, String(ctx.flags.field)) + '\n');
        return;
      }
      ctx.print(body, () =>
        (ctx.flags['no-store']
          ? 'Success! You are now authenticated. The token is not stored in the token helper (-no-store); pass it with -token or SECRETS_TOKEN.\n\n'
          : 'Success! You are now authenticated. The token information displayed below is already stored in the token helper. You do NOT need to run "portcullis secrets login" again. Future requests will automatically use this token.\n\n') +
        formatSecret(body),
      );
    },
  },
  {
    words: ['token', 'create'],
    summary: 'create a token',
    usage: 'portcullis secrets token create [-policy=P ...] [-ttl=D] [-period=D] [-type=service|batch] [-orphan]',
    flags: TOKEN_CREATE_FLAGS,
    async run(ctx) {
      const f = ctx.flags;
      const data: Record<string, unknown> = {};
      if ((f.policy as string[]).length) data.policies = f.policy;
      if (f.ttl) data.ttl = f.ttl;
      if (f.period) data.period = f.period;
      if (f.type) data.type = f.type;
      if (ctx.given.has('renewable')) data.renewable = f.renewable;
      if (f['display-name']) data.display_name = f['display-name'];
      if (f['use-limit']) data.num_uses = f['use-limit'];
      if (f['no-default-policy']) data.no_default_policy = true;
      if (f['explicit-max-ttl']) data.explicit_max_ttl = f['explicit-max-ttl'];
      if (f.id) data.id = f.id;
      if (f['entity-alias']) data.entity_alias = f['entity-alias'];
      const meta = f.metadata as string[];
      if (meta.length) data.meta = await parseData(meta, ctx.io.stdin);
      const path = f.role ? `auth/token/create/${f.role}` : f.orphan ? 'auth/token/create-orphan' : 'auth/token/create';
      secretOutput(ctx, await (await ctx.client()).write(path, data));
    },
  },
  {
    words: ['token', 'lookup'],
    summary: 'look up a token, by accessor with -accessor, or the current token',
    usage: 'portcullis secrets token lookup [-accessor] [TOKEN | ACCESSOR]',
    flags: [{ name: 'accessor', kind: 'bool', help: 'the argument is an accessor' }, FIELD],
    async run(ctx) {
      const client = await ctx.client();
      tooMany(ctx.args, 1, this.usage);
      let response: ApiResponse;
      if (ctx.flags.accessor) {
        need(ctx.args, 1, this.usage);
        response = await client.write('auth/token/lookup-accessor', { accessor: ctx.args[0] });
      } else if (ctx.args[0]) response = await client.write('auth/token/lookup', { token: ctx.args[0] });
      else response = await client.read('auth/token/lookup-self');
      secretOutput(ctx, response);
    },
  },
  {
    words: ['token', 'capabilities'],
    summary: 'print the capabilities of a token on a path',
    usage: 'portcullis secrets token capabilities [-accessor] [TOKEN | ACCESSOR] PATH',
    flags: [{ name: 'accessor', kind: 'bool', help: 'the first argument is an accessor' }],
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      tooMany(ctx.args, 2, this.usage);
      const client = await ctx.client();
      const path = ctx.args[ctx.args.length - 1]!;
      let response: ApiResponse;
      if (ctx.flags.accessor) {
        need(ctx.args, 2, this.usage);
        response = await client.write('sys/capabilities-accessor', { accessor: ctx.args[0], path });
      } else if (ctx.args.length === 2 && ctx.args[0] !== client.token) {
        response = await client.write('sys/capabilities', { token: ctx.args[0], path });
      } else {
        response = await client.write('sys/capabilities-self', { path });
      }
      const data = (response.body?.data ?? {}) as Record<string, unknown>;
      const capabilities = (data[path] ?? data.capabilities ?? []) as string[];
      if (ctx.json) ctx.io.out(json(capabilities));
      else ctx.io.out(capabilities.join(', ') + '\n');
    },
  },
  {
    words: ['token', 'renew'],
    summary: 'renew a token (or the current token), by accessor with -accessor',
    usage: 'portcullis secrets token renew [-accessor] [-increment=D] [TOKEN | ACCESSOR]',
    flags: [{ name: 'accessor', kind: 'bool', help: 'the argument is an accessor' }, { name: 'increment', kind: 'string', help: 'requested extension', aliases: ['i'] }, FIELD],
    async run(ctx) {
      tooMany(ctx.args, 1, this.usage);
      const client = await ctx.client();
      const increment = ctx.flags.increment ? { increment: ctx.flags.increment } : {};
      let response: ApiResponse;
      if (ctx.flags.accessor) {
        need(ctx.args, 1, this.usage);
        response = await client.write('auth/token/renew-accessor', { accessor: ctx.args[0], ...increment });
      } else if (ctx.args[0]) response = await client.write('auth/token/renew', { token: ctx.args[0], ...increment });
      else response = await client.write('auth/token/renew-self', increment);
      secretOutput(ctx, response);
    },
  },
  {
    words: ['token', 'revoke'],
    summary: 'revoke a token and its children (by accessor with -accessor; -self; -mode=orphan)',
    usage: 'portcullis secrets token revoke [-accessor | -self | -mode=orphan] [TOKEN | ACCESSOR]',
    flags: [
      { name: 'accessor', kind: 'bool', help: 'the argument is an accessor' },
      { name: 'self', kind: 'bool', help: 'revoke the current token' },
      { name: 'mode', kind: 'string', help: '"orphan" keeps the children (as orphans)' },
    ],
    async run(ctx) {
      const client = await ctx.client();
      let response: ApiResponse;
      if (ctx.flags.self) response = await client.write('auth/token/revoke-self', {});
      else {
        need(ctx.args, 1, this.usage);
        if (ctx.flags.accessor) response = await client.write('auth/token/revoke-accessor', { accessor: ctx.args[0] });
        else if (ctx.flags.mode === 'orphan') response = await client.write('auth/token/revoke-orphan', { token: ctx.args[0] });
        else if (ctx.flags.mode && ctx.flags.mode !== '') throw new UsageError(`unknown mode ${JSON.stringify(ctx.flags.mode)}: only "orphan" is supported`);
        else response = await client.write('auth/token/revoke', { token: ctx.args[0] });
      }
      ctx.io.err(warningsBlock(response.body?.warnings));
      ctx.io.out('Success! Revoked token (if it existed)\n');
    },
  },
  {
    words: ['read'],
    summary: 'read data at a path',
    usage: 'portcullis secrets read [-field=F] PATH [K=V...]',
    flags: [FIELD],
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      const path = ctx.args[0]!;
      const query = Object.fromEntries(Object.entries(await parseData(ctx.args.slice(1), ctx.io.stdin)).map(([k, v]) => [k, String(v)]));
      try {
        secretOutput(ctx, await (await ctx.client()).read(path, query));
      } catch (error) {
        if (error instanceof ApiError && error.status === 404 && error.errors.length === 0) throw new CommandError(`No value found at ${path}`, 2);
        throw error;
      }
    },
  },
  {
    words: ['write'],
    summary: 'write data to a path',
    usage: 'portcullis secrets write [-force] PATH [K=V...]',
    flags: [{ name: 'force', kind: 'bool', help: 'allow writing with no data', aliases: ['f'] }, FIELD],
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      const path = ctx.args[0]!;
      const data = await parseData(ctx.args.slice(1), ctx.io.stdin);
      if (Object.keys(data).length === 0 && !ctx.flags.force) throw new UsageError('Must supply data or use -force');
      const response = await (await ctx.client()).write(path, data);
      if (response.status === 204 || !response.body) {
        ctx.io.out(`Success! Data written to: ${path}\n`);
        return;
      }
      secretOutput(ctx, response);
    },
  },
  {
    words: ['delete'],
    summary: 'delete data at a path',
    usage: 'portcullis secrets delete PATH',
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      await (await ctx.client()).delete(ctx.args[0]!);
      ctx.io.out(`Success! Data deleted (if it existed) at: ${ctx.args[0]}\n`);
    },
  },
  {
    words: ['list'],
    summary: 'list keys under a path',
    usage: 'portcullis secrets list PATH',
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      const path = ctx.args[0]!;
      try {
        const response = await (await ctx.client()).list(path);
        const keys = (response.body?.data as { keys?: unknown } | undefined)?.keys;
        ctx.print(keys, () => warningsBlock(response.body?.warnings) + formatList(keys));
      } catch (error) {
        if (error instanceof ApiError && error.status === 404 && error.errors.length === 0) throw new CommandError(`No value found at ${path.replace(/\/?$/, '/')}`, 2);
        throw error;
      }
    },
  },
  {
    words: ['policy', 'write'],
    summary: 'upload an ACL policy (HCL or JSON) from a file or - for stdin',
    usage: 'portcullis secrets policy write NAME FILE|-',
    async run(ctx) {
      need(ctx.args, 2, this.usage);
      const [name, file] = ctx.args as [string, string];
      const text = file === '-' ? await readStdin(ctx.io.stdin) : await readFile(file, 'utf8').catch(() => {
        throw new UsageError(`error opening policy file ${file}`);
      });
      await (await ctx.client()).write(`sys/policies/acl/${encodeURIComponent(name)}`, { policy: text });
      ctx.io.out(`Success! Uploaded policy: ${name}\n`);
    },
  },
  {
    words: ['policy', 'read'],
    summary: 'print an ACL policy',
    usage: 'portcullis secrets policy read NAME',
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      try {
        const response = await (await ctx.client()).read(`sys/policies/acl/${encodeURIComponent(ctx.args[0]!)}`);
        const data = (response.body?.data ?? {}) as { policy?: string };
        ctx.print(response.body, () => `${data.policy ?? ''}${(data.policy ?? '').endsWith('\n') ? '' : '\n'}`);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) throw new CommandError(`No policy named: ${ctx.args[0]}`, 2);
        throw error;
      }
    },
  },
  {
    words: ['policy', 'list'],
    summary: 'list ACL policies',
    usage: 'portcullis secrets policy list',
    async run(ctx) {
      const response = await (await ctx.client()).list('sys/policies/acl');
      const keys = ((response.body?.data as { keys?: string[] } | undefined)?.keys ?? []) as string[];
      ctx.print(keys, () => keys.join('\n') + '\n');
    },
  },
  {
    words: ['policy', 'delete'],
    summary: 'delete an ACL policy',
    usage: 'portcullis secrets policy delete NAME',
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      await (await ctx.client()).delete(`sys/policies/acl/${encodeURIComponent(ctx.args[0]!)}`);
      ctx.io.out(`Success! Deleted policy: ${ctx.args[0]}\n`);
    },
  },
  {
    words: ['secrets', 'enable'],
    summary: 'enable a secrets engine (kv, kv-v2, …)',
    usage: 'portcullis secrets secrets enable [-path=P] [-version=2] [-description=D] TYPE',
    flags: [
      { name: 'path', kind: 'string', help: 'mount path (default: the type)' },
      { name: 'description', kind: 'string', help: 'description' },
      { name: 'version', kind: 'int', help: 'KV version (1 or 2)' },
      { name: 'options', kind: 'strings', help: 'key=value mount options (repeatable)' },
      { name: 'default-lease-ttl', kind: 'string', help: 'default lease TTL' },
      { name: 'max-lease-ttl', kind: 'string', help: 'max lease TTL' },
    ],
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      const type = ctx.args[0]!;
      const path = String(ctx.flags.path || type).replace(/^\/+|\/+$/g, '');
      const options: Record<string, unknown> = await parseData(ctx.flags.options as string[], ctx.io.stdin);
      if (ctx.flags.version) options.version = String(ctx.flags.version);
      const config: Record<string, unknown> = {};
      if (ctx.flags['default-lease-ttl']) config.default_lease_ttl = ctx.flags['default-lease-ttl'];
      if (ctx.flags['max-lease-ttl']) config.max_lease_ttl = ctx.flags['max-lease-ttl'];
      await (await ctx.client()).write(`sys/mounts/${path}`, { type, description: ctx.flags.description ?? '', config, ...(Object.keys(options).length ? { options } : {}) });
      ctx.io.out(`Success! Enabled the ${type} secrets engine at: ${path}/\n`);
    },
  },
  {
    words: ['secrets', 'list'],
    summary: 'list secrets engines',
    usage: 'portcullis secrets secrets list',
    async run(ctx) {
      const response = await (await ctx.client()).read('sys/mounts');
      ctx.print(response.body?.data, () => mountsTable((response.body?.data ?? {}) as Record<string, Record<string, unknown>>));
    },
  },
  {
    words: ['secrets', 'disable'],
    summary: 'disable a secrets engine',
    usage: 'portcullis secrets secrets disable PATH',
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      const path = ctx.args[0]!.replace(/^\/+|\/+$/g, '');
      await (await ctx.client()).delete(`sys/mounts/${path}`);
      ctx.io.out(`Success! Disabled the secrets engine (if it existed) at: ${path}/\n`);
    },
  },
  {
    words: ['auth', 'enable'],
    summary: 'enable an auth method (userpass, approle, idp/okta, ldap, …)',
    usage: 'portcullis secrets auth enable [-path=P] [-description=D] TYPE',
    flags: [
      { name: 'path', kind: 'string', help: 'mount path under auth/ (default: the type)' },
      { name: 'description', kind: 'string', help: 'description' },
      { name: 'default-lease-ttl', kind: 'string', help: 'default token TTL' },
      { name: 'max-lease-ttl', kind: 'string', help: 'max token TTL' },
    ],
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      const type = ctx.args[0]!;
      const path = String(ctx.flags.path || type).replace(/^\/+|\/+$/g, '');
      const config: Record<string, unknown> = {};
      if (ctx.flags['default-lease-ttl']) config.default_lease_ttl = ctx.flags['default-lease-ttl'];
      if (ctx.flags['max-lease-ttl']) config.max_lease_ttl = ctx.flags['max-lease-ttl'];
      await (await ctx.client()).write(`sys/auth/${path}`, { type, description: ctx.flags.description ?? '', config });
      ctx.io.out(`Success! Enabled ${type} auth method at: ${path}/\n`);
    },
  },
  {
    words: ['auth', 'list'],
    summary: 'list auth methods',
    usage: 'portcullis secrets auth list',
    async run(ctx) {
      const response = await (await ctx.client()).read('sys/auth');
      ctx.print(response.body?.data, () => mountsTable((response.body?.data ?? {}) as Record<string, Record<string, unknown>>));
    },
  },
  {
    words: ['auth', 'disable'],
    summary: 'disable an auth method (revokes its tokens)',
    usage: 'portcullis secrets auth disable PATH',
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      const path = ctx.args[0]!.replace(/^\/+|\/+$/g, '');
      await (await ctx.client()).delete(`sys/auth/${path}`);
      ctx.io.out(`Success! Disabled the auth method (if it existed) at: ${path}/\n`);
    },
  },
  {
    words: ['audit', 'enable'],
    summary: 'enable an audit device: audit enable file file_path=PATH',
    usage: 'portcullis secrets audit enable [-path=P] file file_path=PATH',
    flags: [{ name: 'path', kind: 'string', help: 'device path (default: the type)' }, { name: 'description', kind: 'string', help: 'description' }],
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      const type = ctx.args[0]!;
      const path = String(ctx.flags.path || type).replace(/^\/+|\/+$/g, '');
      const options = await parseData(ctx.args.slice(1), ctx.io.stdin);
      await (await ctx.client()).write(`sys/audit/${path}`, { type, description: ctx.flags.description ?? '', options });
      ctx.io.out(`Success! Enabled the ${type} audit device at: ${path}/\n`);
    },
  },
  {
    words: ['audit', 'list'],
    summary: 'list audit devices',
    usage: 'portcullis secrets audit list',
    async run(ctx) {
      const response = await (await ctx.client()).read('sys/audit');
      const data = (response.body?.data ?? {}) as Record<string, Record<string, unknown>>;
      ctx.print(data, () => (Object.keys(data).length ? table(Object.entries(data).map(([p, d]) => [p, String(d.type)]), ['Path', 'Type']) : 'No audit devices are enabled.\n'));
    },
  },
  {
    words: ['audit', 'disable'],
    summary: 'disable an audit device',
    usage: 'portcullis secrets audit disable PATH',
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      const path = ctx.args[0]!.replace(/^\/+|\/+$/g, '');
      await (await ctx.client()).delete(`sys/audit/${path}`);
      ctx.io.out(`Success! Disabled audit device (if it was enabled) at: ${path}/\n`);
    },
  },
  {
    words: ['kv', 'put'],
    summary: 'write a KV secret (v1 or v2, detected from the mount)',
    usage: 'portcullis secrets kv put [-mount=M] [-cas=N] PATH K=V...',
    flags: [{ name: 'mount', kind: 'string', help: 'the KV mount (else the first path segment)' }, { name: 'cas', kind: 'int', help: 'check-and-set version', default: -1 }, FIELD],
    async run(ctx) {
      need(ctx.args, 2, this.usage);
      const client = await ctx.client();
      const { mount, rest, version } = await kvMount(client, ctx.args[0]!, ctx.flags.mount as string | undefined);
      const data = await parseData(ctx.args.slice(1), ctx.io.stdin);
      if (version === 1) {
        await client.write(`${mount}${rest}`, data);
        ctx.io.out(`Success! Data written to: ${mount}${rest}\n`);
        return;
      }
      const cas = ctx.flags.cas as number;
      const response = await client.write(`${mount}data/${rest}`, { data, ...(cas >= 0 ? { options: { cas } } : {}) });
      if (ctx.flags.field) return void ctx.io.out(field(response.body, String(ctx.flags.field)) + '\n');
      ctx.print(response.body, () => `${'== Secret Path =='}\n${mount}data/${rest}\n\n======= Metadata =======\n${formatSecret(response.body)}`);
    },
  },
  {
    words: ['kv', 'get'],
    summary: 'read a KV secret (v1 or v2)',
    usage: 'portcullis secrets kv get [-mount=M] [-version=N] [-field=F] PATH',
    flags: [{ name: 'mount', kind: 'string', help: 'the KV mount' }, { name: 'version', kind: 'int', help: 'version to read (v2)' }, FIELD],
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      const client = await ctx.client();
      const { mount, rest, version } = await kvMount(client, ctx.args[0]!, ctx.flags.mount as string | undefined);
      const apiPath = version === 2 ? `${mount}data/${rest}` : `${mount}${rest}`;
      let response: ApiResponse;
      try {
        response = await client.read(apiPath, ctx.flags.version ? { version: String(ctx.flags.version) } : undefined);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) throw new CommandError(`No value found at ${apiPath}`, 2);
        throw error;
      }
      if (version === 1) return secretOutput(ctx, response);
      const inner = (response.body?.data ?? {}) as { data?: Record<string, unknown>; metadata?: Record<string, unknown> };
      if (ctx.flags.field) {
        const value = inner.data?.[String(ctx.flags.field)];
        if (value === undefined) throw new CommandError(`Field "${ctx.flags.field}" not present in secret`, 1);
        ctx.io.out((typeof value === 'string' ? value : JSON.stringify(value)) + '\n');
        return;
      }
      ctx.print(response.body, () =>
        warningsBlock(response.body?.warnings) +
        `== Secret Path ==\n${apiPath}\n\n======= Metadata =======\n${formatSecret({ data: inner.metadata })}\n====== Data ======\n${formatSecret({ data: inner.data })}`,
      );
    },
  },
  {
    words: ['kv', 'list'],
    summary: 'list KV keys',
    usage: 'portcullis secrets kv list [-mount=M] PATH',
    flags: [{ name: 'mount', kind: 'string', help: 'the KV mount' }],
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      const client = await ctx.client();
      const { mount, rest, version } = await kvMount(client, ctx.args[0]!, ctx.flags.mount as string | undefined);
      const apiPath = version === 2 ? `${mount}metadata/${rest}` : `${mount}${rest}`;
      try {
        const response = await client.list(apiPath);
        const keys = (response.body?.data as { keys?: unknown } | undefined)?.keys;
        ctx.print(keys, () => formatList(keys));
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) throw new CommandError(`No value found at ${apiPath.replace(/\/?$/, '/')}`, 2);
        throw error;
      }
    },
  },
  {
    words: ['kv', 'delete'],
    summary: 'delete a KV secret (v2: soft-delete the latest version)',
    usage: 'portcullis secrets kv delete [-mount=M] PATH',
    flags: [{ name: 'mount', kind: 'string', help: 'the KV mount' }],
    async run(ctx) {
      need(ctx.args, 1, this.usage);
      const client = await ctx.client();
      const { mount, rest, version } = await kvMount(client, ctx.args[0]!, ctx.flags.mount as string | undefined);
      const apiPath = version === 2 ? `${mount}data/${rest}` : `${mount}${rest}`;
      await client.delete(apiPath);
      ctx.io.out(`Success! Data deleted (if it existed) at: ${apiPath}\n`);
    },
  },
  {
    words: ['operator', 'init'],
    summary: 'initialise the server: split the unseal key into shares',
    usage: 'portcullis secrets operator init [-key-shares=5] [-key-threshold=3]',
    flags: [
      { name: 'key-shares', kind: 'int', help: 'number of key shares', default: 5, aliases: ['n'] },
      { name: 'key-threshold', kind: 'int', help: 'shares needed to unseal', default: 3, aliases: ['t'] },
    ],
    async run(ctx) {
      const response = await (await ctx.client()).write('sys/init', { secret_shares: ctx.flags['key-shares'], secret_threshold: ctx.flags['key-threshold'] });
      const body = response.body ?? {};
      const keys = (body.keys_base64 ?? []) as string[];
      if (ctx.json) {
        ctx.io.out(json({ unseal_keys_b64: keys, unseal_keys_hex: body.keys, unseal_shares: ctx.flags['key-shares'], unseal_threshold: ctx.flags['key-threshold'], recovery_keys_b64: [], recovery_keys_hex: [], recovery_keys_shares: 0, recovery_keys_threshold: 0, root_token: body.root_token }));
        return;
      }
      ctx.io.out(
        keys.map((k, i) => `Unseal Key ${i + 1}: ${k}`).join('\n') +
          `\n\nInitial Root Token: ${body.root_token}\n\n` +
          `The server is initialized with ${keys.length} key shares and a key threshold of ${ctx.flags['key-threshold']}. Please securely distribute the key shares printed above. When the server is re-sealed, restarted, or stopped, you must supply at least ${ctx.flags['key-threshold']} of these keys to unseal it before it can start servicing requests.\n`,
      );
    },
  },
  {
    words: ['operator', 'unseal'],
    summary: 'provide one unseal key share (typed at a hidden prompt when not given)',
    usage: 'portcullis secrets operator unseal [-reset] [KEY]',
    flags: [{ name: 'reset', kind: 'bool', help: 'discard the shares given so far' }],
    async run(ctx) {
      const client = await ctx.client();
      let body: Record<string, unknown>;
      if (ctx.flags.reset) body = { reset: true };
      else {
        const key = ctx.args[0] && ctx.args[0] !== '-' ? ctx.args[0] : await promptHidden('Unseal Key (will be hidden): ', ctx.io.stdin, ctx.io.err);
        body = { key };
      }
      const response = await client.write('sys/unseal', body);
      ctx.print(response.body, () => sealStatusTable(response.body ?? {}));
    },
  },
  {
    words: ['operator', 'seal'],
    summary: 'seal the server (needs sudo)',
    usage: 'portcullis secrets operator seal',
    async run(ctx) {
      await (await ctx.client()).write('sys/seal', {});
      ctx.io.out('Success! Vault is sealed.\n');
    },
  },
  {
    words: ['operator', 'generate-root'],
    summary: 'generate a new root token with a quorum of unseal keys',
    usage: 'portcullis secrets operator generate-root [-init [-otp=OTP] | -status | -cancel | -decode=ENCODED -otp=OTP | -generate-otp | [-nonce=N] [KEY]]',
    flags: [
      { name: 'init', kind: 'bool', help: 'start a root token generation' },
      { name: 'status', kind: 'bool', help: 'print the status of the current attempt' },
      { name: 'cancel', kind: 'bool', help: 'cancel the current attempt' },
      { name: 'otp', kind: 'string', help: 'one-time password (with -init: use this one; with -decode: decode with it)' },
      { name: 'decode', kind: 'string', help: 'decode an encoded root token (- reads stdin)' },
      { name: 'nonce', kind: 'string', help: 'nonce of the attempt (default: read from the status)' },
      { name: 'generate-otp', kind: 'bool', help: 'print a one-time password of the right length' },
      { name: 'pgp-key', kind: 'string', help: 'not supported (use the OTP flow)' },
    ],
    async run(ctx) {
      const client = await ctx.client();
      const f = ctx.flags;
      const modes = ['init', 'status', 'cancel', 'generate-otp'].filter((m) => f[m]).length + (f.decode ? 1 : 0);
      if (modes > 1) throw new UsageError('only one of -init, -status, -cancel, -decode and -generate-otp may be given');
      if (f['generate-otp']) {
        const status = await client.read('sys/generate-root/attempt');
        ctx.io.out(randomBase62(Number(status.body?.otp_length) || 28) + '\n');
        return;
      }
      if (f.decode) {
        if (!f.otp) throw new UsageError('-otp is required with -decode');
        const encoded = f.decode === '-' ? (await readStdin(ctx.io.stdin)).trim() : String(f.decode);
        const status = await client.read('sys/generate-root/attempt');
        if (!Number(status.body?.otp_length)) throw new CommandError('the server reports no OTP length; legacy (UUID) root tokens are not supported', 2);
        let token: string;
        try {
          token = decodeToken(encoded, String(f.otp));
        } catch (error) {
          throw new CommandError(`Error decoding root token: ${(error as Error).message}`, 2);
        }
        ctx.io.out(ctx.json ? json({ token }) : `${token}\n`);
        return;
      }
      if (f.cancel) {
        await client.delete('sys/generate-root/attempt');
        ctx.io.out('Success! Root token generation canceled (if it was started)\n');
        return;
      }
      if (f.status) {
        const response = await client.read('sys/generate-root/attempt');
        ctx.print(response.body, () => generateRootTable(response.body ?? {}));
        return;
      }
      if (f.init) {
        if (f['pgp-key']) throw new UsageError('-pgp-key is not supported; use the OTP flow');
        const response = await client.write('sys/generate-root/attempt', { otp: f.otp ?? '', pgp_key: '' });
        const body = response.body ?? {};
        ctx.print(body, () =>
          generateRootTable(body) +
          (body.otp ? '\nA One-Time-Password has been generated for you and is shown in the OTP field. You will need this value to decode the resulting root token, so keep it safe.\n' : ''),
        );
        return;
      }
      const status = await client.read('sys/generate-root/attempt');
      if (!status.body?.started) throw new CommandError('No root generation is in progress. Start one with -init.', 2);
      const nonce = String(f.nonce || status.body.nonce);
      const key = ctx.args[0] && ctx.args[0] !== '-' ? ctx.args[0] : await promptHidden('Unseal Key (will be hidden): ', ctx.io.stdin, ctx.io.err);
      const response = await client.write('sys/generate-root/update', { key, nonce });
      ctx.print(response.body, () => generateRootTable(response.body ?? {}));
    },
  },
];

function mountsTable(data: Record<string, Record<string, unknown>>): string {
  const rows = Object.keys(data)
    .sort()
    .map((path) => [path, String(data[path]!.type ?? ''), String(data[path]!.accessor ?? ''), String(data[path]!.description ?? '')] as const);
  const widths = [4, 4, 8].map((w, i) => Math.max(w, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c)).join('    ').trimEnd();
  return [line(['Path', 'Type', 'Accessor', 'Description']), line(['----', '----', '--------', '-----------']), ...rows.map(line)].join('\n') + '\n';
}

/** Run `portcullis secrets ARGS…`. */
export async function runSecretsCli(argv: readonly string[], io: Io): Promise<void> {
  if (argv[0] === 'help') return runSecretsCli([...argv.slice(1), '-help'], io);
  const words = argv.filter((a) => !a.startsWith('-'));
  let command: CommandSpec | undefined;
  for (const candidate of COMMANDS) {
    const n = candidate.words.length;
    if (candidate.words.every((w, i) => words[i] === w) && (!command || n > command.words.length)) command = candidate;
  }
  const helpAsked = argv.some((a) => a === '-h' || a === '-help' || a === '--help');
  if (!command && !helpAsked) {
    const flag = argv.find((a) => a.startsWith('-'));
    if (flag) throw new UsageError(`unknown option '${flag.split('=')[0]}'`);
  }
  if (!command || helpAsked) {
    io.out(help(command, words));
    if (!command && words.length > 0) throw new UsageError(`unknown command: ${words.join(' ')}`);
    return;
  }
  // Remove the command words (the first occurrences, in order) and keep everything else.
  const rest = [...argv];
  for (const word of command.words) rest.splice(rest.indexOf(word), 1);
  const specs = command.local ? [...(command.flags ?? [])] : [...GLOBAL_FLAGS, ...(command.flags ?? [])];
  const parsed = parseFlags(rest, specs);
  const format = String(parsed.flags.format || io.env.VAULT_FORMAT || 'table');
  if (!command.local && format !== 'table' && format !== 'json') throw new UsageError(`invalid output format ${JSON.stringify(format)}: use table or json`);
  const context: Context = {
    flags: parsed.flags,
    given: parsed.given,
    args: parsed.args,
    io,
    json: format === 'json',
    async client() {
      const env = io.env;
      const address = String(parsed.flags.address || env.SECRETS_ADDR || env.VAULT_ADDR || 'http://127.0.0.1:8200');
      const token = (parsed.flags.token as string | undefined) || env.SECRETS_TOKEN || env.VAULT_TOKEN || (await readTokenHelper(env));
      const skip = parsed.flags['tls-skip-verify'] === true || /^(1|true)$/i.test(env.VAULT_SKIP_VERIFY ?? '');
      return new Client({ address, token, caCert: (parsed.flags['ca-cert'] as string | undefined) || env.VAULT_CACERT || undefined, skipVerify: skip });
    },
    print(body, render) {
      io.out(format === 'json' ? json(body ?? null) : render());
    },
  };
  await command.run(context);
}

function help(command: CommandSpec | undefined, words: readonly string[]): string {
  if (command) {
    const flags = command.local ? command.flags ?? [] : [...(command.flags ?? []), ...GLOBAL_FLAGS];
    return `Usage: ${command.usage}\n\n  ${command.summary}\n\nFlags:\n${flagHelp(flags)}\n`;
  }
  const prefix = words.length && COMMANDS.some((c) => c.words[0] === words[0]) ? [words[0]!] : [];
  const listed = COMMANDS.filter((c) => prefix.every((w, i) => c.words[i] === w));
  const width = Math.max(...listed.map((c) => c.words.join(' ').length));
  return (
    'Usage: portcullis secrets <command> [flags] [args]\n\nA Vault-compatible secrets service and its command line (Go-style flags: -format=json, -method=userpass).\n\nCommands:\n' +
    listed.map((c) => `  ${c.words.join(' ').padEnd(width)}  ${c.summary}`).join('\n') +
    '\n\nEnvironment: SECRETS_ADDR / VAULT_ADDR, SECRETS_TOKEN / VAULT_TOKEN, SECRETS_TOKEN_FILE (token helper file).\n'
  );
}

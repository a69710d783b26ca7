/**
 * The logical request/response model every backend (secrets engines, auth methods, the token store,
 * `sys/`) speaks. The HTTP edge turns a wire request into a `Request`, the core routes it to the
 * mount's backend, and turns the `Response` into Vault's envelope. Backends never see HTTP.
 */
import type { StorageView } from './storage-view.js';

/** The operations of Vault's logical layer; `create` vs `update` is decided by a path's existence check. */
export type Operation = 'create' | 'read' | 'update' | 'delete' | 'list' | 'patch' | 'help';

export const OPERATIONS: readonly Operation[] = ['create', 'read', 'update', 'delete', 'list', 'patch', 'help'];

/** What the core knows about the caller, after token lookup. Undefined for unauthenticated paths. */
export interface Caller {
  /** The token presented, exactly as sent (kept only for the life of the request). */
  readonly token: string;
  /** HMAC of the token under the token store's salt: a stable private key for per-token data. */
  readonly tokenHash: string;
  readonly accessor: string;
  readonly policies: readonly string[];
  readonly displayName: string;
  readonly entityId: string;
  readonly metadata: Readonly<Record<string, string>> | null;
  readonly tokenType: 'service' | 'batch';
  readonly isRoot: boolean;
  /** Sudo on this request's path (root tokens always). */
  readonly sudo: boolean;
}

export interface MountInfo {
  /** Mount path with trailing slash: `secret/`, `auth/userpass/`. */
  readonly path: string;
  readonly type: string;
  readonly accessor: string;
  readonly uuid: string;
  readonly kind: 'secret' | 'auth' | 'system' | 'token';
}

export interface Request {
  readonly operation: Operation;
  /** Path inside the mount (no leading slash; list operations end in `/` unless empty). */
  readonly path: string;
  /** Request body merged with query parameters (GET/DELETE), as JSON values. */
  readonly data: Readonly<Record<string, unknown>>;
  /** This mount's storage, under the barrier. */
  readonly storage: StorageView;
  readonly mount: MountInfo;
  readonly caller?: Caller;
  /** Remote address of the client (for CIDR-bound roles). */
  readonly remoteAddress: string;
  /** Request headers, lower-cased names. Never log them: they carry tokens. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** `Content-Type` was `application/merge-patch+json` (required for PATCH). */
  readonly mergePatch?: boolean;
}

/**
 * The result of a login (an auth method's login handler returns `{ auth }`), and what the token
 * store keeps to renew it. See src/secrets/auth/index.ts for the whole login contract.
 */
export interface Auth {
  /** Policies the method grants; the core sanitises them (lower-case, sort, add `default`). */
  readonly policies: readonly string[];
  /** Metadata shown as `auth.metadata` and `token_meta_<key>` in the CLI. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** `display_name` suffix: the core stores `<mount type>-<displayName>` (e.g. `userpass-alice`). */
  readonly displayName: string;
  /** Seconds; 0 = the mount's default TTL. */
  readonly ttl?: number;
  /** Seconds; 0 = the mount's max TTL. Renewal never goes past it. */
  readonly maxTtl?: number;
  /** Seconds; a periodic token is renewed to `period` each time, with no max TTL. */
  readonly period?: number;
  /** Seconds; a hard cap over everything else. */
  readonly explicitMaxTtl?: number;
  /** 0 = unlimited. */
  readonly numUses?: number;
  /** Default true. */
  readonly renewable?: boolean;
  /** Do not add the `default` policy. */
  readonly noDefaultPolicy?: boolean;
  /** `service` (default) or `batch`; `default`/`default-service` mean service, `default-batch` batch. */
  readonly tokenType?: string;
  /** CIDRs the token may be used from. */
  readonly boundCidrs?: readonly string[];
  /**
   * Private data the method needs again on renewal (e.g. a role name). Stored encrypted with the
   * token, never returned to clients.
   */
  readonly internalData?: Readonly<Record<string, unknown>>;
  /** The identity alias: the method's stable name for this principal (e.g. the username). */
  readonly alias?: { readonly name: string; readonly metadata?: Readonly<Record<string, string>> };
  /** Group names from the method (Okta/LDAP groups), recorded as group aliases. */
  readonly groupAliases?: readonly string[];
}

/** What a renewal gives a backend: the stored auth of the token being renewed. */
export interface RenewRequest {
  readonly auth: Auth;
  readonly storage: StorageView;
  readonly mount: MountInfo;
  /** The increment asked for, in seconds (0: none). */
  readonly increment: number;
  /** The token's login path, e.g. `login/alice`. */
  readonly path: string;
}

export interface Response {
  /** `data` of the envelope; undefined/null with nothing else → 204. */
  readonly data?: Record<string, unknown> | null;
  /** A login result (auth methods) — the core turns it into a token. */
  readonly auth?: Auth;
  readonly warnings?: readonly string[];
  /** Override the status (e.g. 202 for tidy, 404 with an envelope for KV v2's invalid paths). */
  readonly statusCode?: number;
  /** Send this body as is, instead of an envelope (sys raw endpoints, KV v2 PATCH 404). */
  readonly raw?: { readonly body: unknown };
  /** Lease fields of the envelope (KV v1 reads report a lease duration). */
  readonly leaseDuration?: number;
  /** The token-store response auth block, already built (token create/renew). */
  readonly tokenAuth?: Record<string, unknown>;
}

/**
 * THE registration point of auth methods. To add one, import its registration and list it below;
 * `portcullis secrets auth enable [-path=P] TYPE` and `POST /v1/sys/auth/:path {"type": TYPE}` then
 * work for it, any number of times at different paths. The token store (`auth/token/`) is built
 * into the core and is not listed here.
 *
 * ## The login contract
 *
 * An auth method is a backend (src/secrets/framework/backend.ts): usually
 * `new FrameworkBackend({ paths, renew })` built by a `BackendFactory` from a `BackendContext`
 * (the mount's info, its own storage view under the barrier, a logger, and a `SystemView` with the
 * mount's TTL defaults and `policyExists`). It is mounted at `auth/<path>/`; its handlers see paths
 * relative to that (`login/alice`).
 *
 * - Login paths set `unauthenticated: true` in their `PathDef` (no token is needed; the ACL is not
 *   consulted). Every other path is authorised by the caller's token as usual, so configuration
 *   endpoints (`users/…`, `role/…`, `config`) need policies granting them.
 * - A login handler returns `{ auth }` (src/secrets/logical.ts `Auth`): `policies` (the method's
 *   token policies, unsanitised), `metadata` (e.g. `{username}`; `{role_name}` for AppRole),
 *   `displayName` (the core stores `<mount type>-<displayName>`, or just the type when empty),
 *   `ttl`/`maxTtl`/`period`/`explicitMaxTtl` in seconds (0 = the mount's defaults), `numUses`,
 *   `renewable` (default true), `noDefaultPolicy`, `tokenType`, `boundCidrs`, `internalData` (kept
 *   encrypted with the token and given back on renewal — never returned to clients), `alias`
 *   (`{name}`: the stable principal name) and `groupAliases`. Warnings go in `warnings`.
 * - The core then creates the token through the token store: an **orphan** service token (or
 *   batch, per `tokenType`) whose `path` is `auth/<mount>/<login path>`, with `default` added
 *   unless `noDefaultPolicy`, policies sanitised (lower-cased, sorted, de-duplicated), TTL capped by
 *   the mount's max TTL, an entity created for (mount accessor, alias name) with `entity_id` set
 *   and `identity_policies` empty. The client receives Vault's `auth` block
 *   (`client_token`, `accessor`, `policies`, `token_policies`, `metadata`, `lease_duration`,
 *   `renewable`, `entity_id`, `token_type`, `orphan: true`, `mfa_requirement: null`, `num_uses`).
 * - A failed login throws `InvalidRequestError('invalid username or password')` (400) or another
 *   error from src/secrets/errors.ts; never a bare `Error` (that is a 500).
 * - On `auth/token/renew*` of such a token the core calls the backend's `renew(request)` with the
 *   stored `Auth` (incl. `internalData`) and the requested increment; return the `Auth` to keep
 *   (e.g. re-read the user's current TTLs) or throw `InvalidRequestError(...)` to refuse
 *   (`policies have changed, not renewing`). Without `renew` the core only extends the TTL.
 * - Disabling the mount revokes every token it issued and deletes its storage.
 */
import type { BackendRegistration } from '../registry.js';
import { approleRegistration } from './approle/backend.js';
import { idpRegistration } from './idp/backend.js';
import { ldapRegistration } from './ldap/backend.js';
import { userpassRegistration } from './userpass/backend.js';

export const authMethods: readonly BackendRegistration[] = [
  userpassRegistration,
  approleRegistration,
  idpRegistration, // type `okta`, also enabled as `idp`
  ldapRegistration,
];

/**
 * The userpass auth method (vault.md §6): accounts kept in the mount's storage with bcrypt password
 * hashes, logins by `POST login/<username> {"password": …}`.
 *
 * Storage (under the barrier, per mount): `user/<lower-cased username>` → `UserEntry`.
 */
import { InvalidRequestError, NotFoundError, PermissionDeniedError } from '../../errors.js';
import { FrameworkBackend, type PathDef } from '../../framework/backend.js';
import type { FieldData } from '../../framework/fields.js';
import type { Auth, RenewRequest, Request, Response } from '../../logical.js';
import type { BackendRegistration } from '../../registry.js';
import { getJSON, putJSON, type StorageView } from '../../storage-view.js';
import { addressAllowed } from '../shared/cidr.js';
import { LoginLockout } from '../shared/lockout.js';
import { hashPassword, verifyPassword } from './password.js';
import { equivalentPolicies, tokenAuth, tokenFields, tokenParamsData, updateTokenParams, type TokenParams } from '../shared/token-params.js';

interface UserEntry {
  /** bcrypt hash; the password itself is never stored. */
  passwordHash: string;
  token: TokenParams;
}

/** Vault's `GenericNameRegex` plus `@`, so that e-mail style names work. */
const USERNAME = String.raw`(?<username>\w(?:[\w.@-]*\w)?)`;
const INVALID_CREDENTIALS = 'invalid username or password';

const userKey = (username: string) => `user/${username.toLowerCase()}`;
const readUser = (storage: StorageView, username: string) => getJSON<UserEntry>(storage, userKey(username));

export function userpassBackend(): FrameworkBackend {
  const lockout = new LoginLockout();
  const tokenSchemas = tokenFields(['policies', 'ttl', 'max_ttl', 'bound_cidrs']);
  const identity = {
    username: { type: 'lowercase-string', description: 'Username of the account.' },
    password: { type: 'string', description: 'Password of the account (stored as a bcrypt hash).' },
  } as const;

  const requireUser = async (request: Request, username: string): Promise<UserEntry> => {
    const user = await readUser(request.storage, username);
    if (!user) throw new InvalidRequestError('username does not exist');
    return user;
  };

  const paths: PathDef[] = [
    {
      pattern: 'users/?',
      operations: {
        list: async (request) => {
          const keys = await request.storage.list('user/');
          if (keys.length === 0) throw new NotFoundError();
          return { data: { keys } };
        },
      },
      synopsis: 'List the accounts.',
    },
    {
      pattern: `users/${USERNAME}`,
      fields: { ...identity, ...tokenSchemas },
      existenceCheck: async (request, fields) => (await readUser(request.storage, fields.string('username'))) !== undefined,
      operations: {
        read: async (request, fields) => {
          const user = await readUser(request.storage, fields.string('username'));
          if (!user) throw new NotFoundError();
          return { data: tokenParamsData(user.token) };
        },
        create: (request, fields) => writeUser(request, fields, true),
        update: (request, fields) => writeUser(request, fields, false),
        delete: async (request, fields) => {
          await request.storage.delete(userKey(fields.string('username')));
          return undefined;
        },
      },
      synopsis: 'Manage an account: password and token parameters.',
    },
    {
      pattern: `users/${USERNAME}/password`,
      fields: identity,
      operations: {
        update: async (request, fields) => {
          const user = await requireUser(request, fields.string('username'));
          const password = fields.string('password');
          if (password === '') throw new InvalidRequestError('missing password');
          await putJSON(request.storage, userKey(fields.string('username')), { ...user, passwordHash: await hashPassword(password) });
          return undefined;
        },
      },
      synopsis: "Change an account's password.",
    },
    {
      pattern: `users/${USERNAME}/policies`,
      fields: { username: identity.username, token_policies: tokenSchemas.token_policies! },
      operations: {
        update: async (request, fields) => {
          const user = await requireUser(request, fields.string('username'));
          const token = updateTokenParams(fields, user.token);
          await putJSON(request.storage, userKey(fields.string('username')), { ...user, token });
          return undefined;
        },
      },
      synopsis: "Change an account's token policies.",
    },
    {
      pattern: `login/${USERNAME}`,
      unauthenticated: true,
      fields: identity,
      operations: { update: login },
      synopsis: 'Log in with a username and password.',
    },
  ];

  async function writeUser(request: Request, fields: FieldData, creating: boolean): Promise<Response | undefined> {
    const username = fields.string('username');
    const existing = creating ? undefined : await readUser(request.storage, username);
    const password = fields.string('password');
    if (!existing && password === '') throw new InvalidRequestError('missing password');
    const token = updateTokenParams(fields, existing?.token);
    const passwordHash = password !== '' ? await hashPassword(password) : existing!.passwordHash;
    await putJSON(request.storage, userKey(username), { passwordHash, token } satisfies UserEntry);
    return undefined;
  }

  async function login(request: Request, fields: FieldData): Promise<Response> {
    const username = fields.string('username');
    const password = fields.string('password');
    if (password === '') throw new InvalidRequestError('missing password');
    lockout.assertNotLocked(username);
    const user = await readUser(request.storage, username);
    if (!(await verifyPassword(password, user?.passwordHash))) {
      lockout.failed(username);
      throw new InvalidRequestError(INVALID_CREDENTIALS);
    }
    lockout.succeeded(username);
    if (!addressAllowed(request.remoteAddress, user!.token.boundCidrs)) throw new PermissionDeniedError('token');
    const auth: Auth = {
      ...tokenAuth(user!.token),
      displayName: username,
      metadata: { username },
      alias: { name: username },
    };
    return { auth };
  }

  async function renew(request: RenewRequest): Promise<Auth> {
    const username = request.auth.metadata?.username ?? '';
    const user = await readUser(request.storage, username);
    if (!user) throw new InvalidRequestError('user no longer exists, not renewing');
    if (!equivalentPolicies(user.token.policies, request.auth.policies)) throw new InvalidRequestError('policies have changed, not renewing');
    return { ...request.auth, ttl: user.token.ttl, maxTtl: user.token.maxTtl, period: user.token.period };
  }

  return new FrameworkBackend({ paths, renew, help: 'The userpass auth method: accounts with a username and a bcrypt-hashed password kept in the service.' });
}

export const userpassRegistration: BackendRegistration = {
  type: 'userpass',
  factory: userpassBackend,
  description: 'username and password credentials',
};

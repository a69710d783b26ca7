/**
 * Impersonation (kube.md §4): `Impersonate-User`, repeated `Impersonate-Group`, `Impersonate-Uid`
 * and `Impersonate-Extra-<key>` headers, each checked with verb `impersonate` before the request
 * continues as the impersonated user.
 */
import type { UserInfo } from '../authn/types.js';
import { AllAuthenticated, AllServiceAccountsGroup, AllUnauthenticated, Anonymous, ServiceAccountUsernamePrefix } from '../authn/types.js';
import { forbiddenError } from './forbidden.js';
import type { Attributes, Authorizer } from './types.js';

/**
 * Headers as Node gives them. Pass `req.headersDistinct` (every value an array) so that repeated
 * `Impersonate-Group` lines stay separate (kube.md G8); a joined string is taken as one value.
 */
export type RequestHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Group, extra or uid without a user: upstream answers 500 with this message. */
export class ImpersonationRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImpersonationRequestError';
  }
}

const values = (headers: RequestHeaders, name: string): string[] => {
  const v = headers[name];
  return v === undefined ? [] : typeof v === 'string' ? [v] : [...v];
};

const extraPrefix = 'impersonate-extra-';

/** One thing to impersonate, as an ObjectReference upstream (its `%v` shape is in the 500 message). */
interface Target {
  readonly kind: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID';
  readonly namespace?: string;
  readonly name: string;
  readonly apiVersion?: string;
  readonly fieldPath?: string;
}

const describeTarget = (t: Target): string => `{${[t.kind, t.namespace ?? '', t.name, '', t.apiVersion ?? '', '', t.fieldPath ?? ''].join(' ')}}`;

function splitServiceAccount(name: string): { namespace: string; name: string } | null {
  if (!name.startsWith(ServiceAccountUsernamePrefix)) return null;
  const parts = name.slice(ServiceAccountUsernamePrefix.length).split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return null;
  return { namespace: parts[0], name: parts[1] };
}

function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/**
 * The impersonated user, or null when the request carries no impersonation headers. Throws
 * ForbiddenError (403, exact upstream message) when a check is not allowed, and
 * ImpersonationRequestError (500) for groups, extras or a uid without a user.
 */
export function impersonate(user: UserInfo, headers: RequestHeaders, authorizer: Authorizer): UserInfo | null {
  const targets: Target[] = [];
  const requestedUser = values(headers, 'impersonate-user')[0] ?? '';
  if (requestedUser) {
    const sa = splitServiceAccount(requestedUser);
    targets.push(sa ? { kind: 'ServiceAccount', ...sa } : { kind: 'User', name: requestedUser });
  }
  const groupsRequested = values(headers, 'impersonate-group');
  for (const group of groupsRequested) targets.push({ kind: 'Group', name: group });
  let hasExtra = false;
  for (const header of Object.keys(headers)) {
    const lower = header.toLowerCase();
    if (!lower.startsWith(extraPrefix)) continue;
    hasExtra = true;
    const key = unescapeExtraKey(lower.slice(extraPrefix.length));
    for (const value of values(headers, header)) targets.push({ kind: 'UserExtra', name: value, apiVersion: 'authentication.k8s.io/v1', fieldPath: key });
  }
  const requestedUid = values(headers, 'impersonate-uid')[0] ?? '';
  if (requestedUid) targets.push({ kind: 'UID', name: requestedUid, apiVersion: 'authentication.k8s.io/v1' });
  if (targets.length === 0) return null;
  if (!requestedUser) throw new ImpersonationRequestError(`requested [${targets.map(describeTarget).join(' ')}] without impersonating a user`);

  let name = '';
  let uid = '';
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const target of targets) {
    const check: Attributes = {
      user,
      verb: 'impersonate',
      resourceRequest: true,
      path: '',
      namespace: target.namespace ?? '',
      apiGroup: target.kind === 'UserExtra' || target.kind === 'UID' ? 'authentication.k8s.io' : '',
      apiVersion: 'v1',
      resource: '',
      subresource: '',
      name: target.name,
    };
    let attributes: Attributes;
    switch (target.kind) {
      case 'ServiceAccount':
        attributes = { ...check, resource: 'serviceaccounts' };
        name = `${ServiceAccountUsernamePrefix}${target.namespace}:${target.name}`;
        if (groupsRequested.length === 0) groups = [AllServiceAccountsGroup, `${AllServiceAccountsGroup}:${target.namespace}`];
        break;
      case 'User':
        attributes = { ...check, resource: 'users' };
        name = target.name;
        break;
      case 'Group':
        attributes = { ...check, resource: 'groups' };
        groups.push(target.name);
        break;
      case 'UserExtra':
        attributes = { ...check, resource: 'userextras', subresource: target.fieldPath! };
        (extra[target.fieldPath!] ??= []).push(target.name);
        break;
      case 'UID':
        attributes = { ...check, resource: 'uids' };
        uid = target.name;
        break;
    }
    const result = authorizer.authorize(attributes);
    if (result.decision !== 'allow') throw forbiddenError(attributes, result.reason);
  }
  if (name !== Anonymous) {
    if (!groups.includes(AllAuthenticated) && !groups.includes(AllUnauthenticated)) groups.push(AllAuthenticated);
  } else if (!groups.includes(AllUnauthenticated)) {
    groups.push(AllUnauthenticated);
  }
  return { name, ...(uid ? { uid } : {}), groups, ...(hasExtra ? { extra } : {}) };
}

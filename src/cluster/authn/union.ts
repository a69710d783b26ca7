/**
 * Composition of authenticators (kube.md §1), each a small wrapper: the union (first success
 * wins, errors gathered), the bearer-token extractor over token authenticators, the
 * `system:authenticated` group adder, and the anonymous fallback that only applies when no
 * credential was presented at all.
 */
import {
  AllAuthenticated,
  AllUnauthenticated,
  Anonymous,
  AuthenticationError,
  type AuthenticationRequest,
  type AuthenticationResult,
  type Authenticator,
} from './types.js';

/** A bearer-token authenticator: null for "not my token", throws AuthenticationError for "my token, but invalid". */
export interface TokenAuthenticator {
  authenticateToken(token: string, audiences?: readonly string[]): Promise<AuthenticationResult | null>;
}

/** Go's utilerrors aggregate text. */
function aggregate(errors: readonly Error[]): AuthenticationError {
  const messages = [...new Set(errors.map((e) => e.message))];
  return new AuthenticationError(messages.length === 1 ? messages[0]! : `[${messages.join(', ')}]`);
}

/** First success wins; if none succeeds, the gathered errors (if any) are thrown together. */
export function unionAuthenticator(authenticators: readonly Authenticator[]): Authenticator {
  return {
    async authenticate(request) {
      const errors: Error[] = [];
      for (const authenticator of authenticators) {
        try {
          const result = await authenticator.authenticate(request);
          if (result) return result;
        } catch (error) {
          errors.push(error instanceof Error ? error : new Error(String(error)));
        }
      }
      if (errors.length) throw aggregate(errors);
      return null;
    },
  };
}

export function unionTokenAuthenticator(authenticators: readonly TokenAuthenticator[]): TokenAuthenticator {
  return {
    async authenticateToken(token, audiences) {
      const errors: Error[] = [];
      for (const authenticator of authenticators) {
        try {
          const result = await authenticator.authenticateToken(token, audiences);
          if (result) return result;
        } catch (error) {
          errors.push(error instanceof Error ? error : new Error(String(error)));
        }
      }
      if (errors.length) throw aggregate(errors);
      return null;
    },
  };
}

/** The token of `Authorization: Bearer <token>` (scheme case-insensitive), or null when there is none. */
export function bearerToken(header: string | readonly string[] | undefined): string | null {
  const value = (typeof header === 'string' ? header : header?.[0] ?? '').trim();
  if (value === '') return null;
  const parts = value.split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return null;
  const token = parts[1]!;
  return token === '' ? null : token;
}

/** Reads the bearer token and asks the token authenticators; a token nobody accepts is `invalid bearer token`. */
export function bearerTokenAuthenticator(tokens: TokenAuthenticator): Authenticator {
  return {
    async authenticate(request) {
      const token = bearerToken(request.headers.authorization);
      if (token === null) return null;
      const result = await tokens.authenticateToken(token, request.audiences);
      if (!result) throw new AuthenticationError('invalid bearer token');
      return result;
    },
  };
}

/**
 * For token authenticators that know nothing of audiences (static tokens): valid only when the
 * requested audiences, if any, meet the server's own (upstream WrapAudienceAgnosticToken).
 */
export function audienceAgnostic(apiAudiences: readonly string[], delegate: TokenAuthenticator): TokenAuthenticator {
  return {
    async authenticateToken(token, audiences) {
      if (!audiences?.length || !apiAudiences.length) return delegate.authenticateToken(token, audiences);
      const common = apiAudiences.filter((a) => audiences.includes(a));
      if (common.length === 0) return null;
      const result = await delegate.authenticateToken(token, audiences);
      return result ? { ...result, audiences: common } : null;
    },
  };
}

/** Adds `system:authenticated` last, unless the user is anonymous or already has either all-users group. */
export function authenticatedGroupAdder(delegate: Authenticator): Authenticator {
  return {
    async authenticate(request) {
      const result = await delegate.authenticate(request);
      if (!result) return null;
      const { user } = result;
      if (user.name === Anonymous || user.groups.includes(AllAuthenticated) || user.groups.includes(AllUnauthenticated)) return result;
      return { ...result, user: { ...user, groups: [...user.groups, AllAuthenticated] } };
    },
  };
}

export const anonymousUser = Object.freeze({ name: Anonymous, groups: Object.freeze([AllUnauthenticated]) });

/**
 * Anonymous access for requests that present no credential. A credential that is presented but
 * wrong still throws (401), never anonymous (upstream union.NewFailOnError).
 */
export function withAnonymous(delegate: Authenticator): Authenticator {
  return {
    async authenticate(request: AuthenticationRequest): Promise<AuthenticationResult> {
      return (await delegate.authenticate(request)) ?? { user: anonymousUser };
    },
  };
}

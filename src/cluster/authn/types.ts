/**
 * The authentication contract of the cluster API server (kube.md §1, §2).
 *
 * An authenticator looks at one request and gives one of three answers:
 *  - a result: "this is user X";
 *  - `null`: "not my kind of credential" (no header of mine, another scheme, an empty token),
 *    so the next authenticator in the union runs;
 *  - a thrown AuthenticationError: "my kind, but wrong" (unknown token, bad password, expired JWT,
 *    an unverified certificate). A presented but invalid credential ends in 401, never anonymous.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { DetailedPeerCertificate } from 'node:tls';

/** Who the caller is, as the authorizers and the review APIs see it (upstream `user.Info`). */
export interface UserInfo {
  readonly name: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export interface AuthenticationRequest {
  readonly headers: IncomingHttpHeaders;
  /** TLS client certificate as presented; `authorized` says whether Node verified it against the server's client CA bundle. */
  readonly tls?: {
    readonly authorized: boolean;
    readonly authorizationError?: string;
    readonly peerCertificate?: DetailedPeerCertificate;
  };
  /**
   * The audiences a token must be valid for. Absent for ordinary API requests (the server's own API
   * audiences apply); set from `TokenReview.spec.audiences` by reviewToken.
   */
  readonly audiences?: readonly string[];
}

export interface AuthenticationResult {
  readonly user: UserInfo;
  /** The audiences the credential was valid for (the intersection with the requested ones, for tokens). */
  readonly audiences?: readonly string[];
}

/** null: not my kind of credential. Throws AuthenticationError: my kind, but wrong (→ 401, never anonymous). */
export interface Authenticator {
  authenticate(request: AuthenticationRequest): Promise<AuthenticationResult | null>;
}

/**
 * "My kind of credential, but wrong." The message is for logs and TokenReview `status.error`;
 * the HTTP answer is always the fixed 401 Status `Unauthorized` (kube.md §1).
 */
export class AuthenticationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthenticationError';
  }
}

/** The well-known identities and groups of kube.md §1 and §2.3. */
export const Anonymous = 'system:anonymous';
export const AllAuthenticated = 'system:authenticated';
export const AllUnauthenticated = 'system:unauthenticated';
export const SystemPrivilegedGroup = 'system:masters';
export const ServiceAccountUsernamePrefix = 'system:serviceaccount:';
export const AllServiceAccountsGroup = 'system:serviceaccounts';

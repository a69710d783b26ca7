/** Cluster authentication: the authenticator the API server runs on every request, and the service-account token issuer. */
import { StartupError } from '../../common/errors.js';
import { BasicAuthenticator } from './basicauth.js';
import { ServiceAccountTokenAuthenticator, type ServiceAccountAuthenticatorOptions } from './serviceaccount.js';
import { StaticTokenAuthenticator } from './tokenfile.js';
import type { Authenticator } from './types.js';
import {
  audienceAgnostic,
  authenticatedGroupAdder,
  bearerTokenAuthenticator,
  unionAuthenticator,
  unionTokenAuthenticator,
  withAnonymous,
  type TokenAuthenticator,
} from './union.js';
import { X509Authenticator } from './x509.js';

export * from './types.js';
export { ServiceAccountTokenIssuer, ServiceAccountTokenAuthenticator, DefaultIssuer, KeyFileName } from './serviceaccount.js';
export type { ServiceAccountPublicKey, ServiceAccountRef, BoundObjectRef, TokenRequestOptions, ServiceAccountAuthenticatorOptions } from './serviceaccount.js';
export { StaticTokenAuthenticator } from './tokenfile.js';
export { BasicAuthenticator, parseBasicAuthorization } from './basicauth.js';
export { X509Authenticator, parseCertificateBundle } from './x509.js';
export {
  unionAuthenticator,
  unionTokenAuthenticator,
  bearerToken,
  bearerTokenAuthenticator,
  audienceAgnostic,
  authenticatedGroupAdder,
  withAnonymous,
  anonymousUser,
} from './union.js';
export type { TokenAuthenticator } from './union.js';

export interface AuthenticatorConfig {
  /** `--token-auth-file`. */
  readonly tokenAuthFile?: string;
  /** `--basic-auth-file`. */
  readonly basicAuthFile?: string;
  /** `--client-ca-file` contents (PEM bundle): enables x509 client certificates. */
  readonly clientCa?: string;
  /** `--anonymous-auth`. */
  readonly anonymous: boolean;
  /** Enables service-account JWTs. `verificationKeys`: typically `[issuer.publicKey]`. */
  readonly serviceAccounts?: ServiceAccountAuthenticatorOptions;
  /**
   * More bearer-token authenticators, tried after the static tokens and service-account JWTs
   * (where an OIDC token authenticator goes: null for tokens that are not its own).
   */
  readonly tokenAuthenticators?: readonly TokenAuthenticator[];
  /** The server's API audiences (default: the service-account issuer). */
  readonly apiAudiences?: readonly string[];
  /** Receives file warnings (empty or duplicate entries). */
  readonly warn?: (message: string) => void;
}

/**
 * The request authenticator: x509, bearer tokens (static file, then service-account JWTs; an
 * OIDC token authenticator slots in beside them), basic auth — first success wins — wrapped by the
 * `system:authenticated` group adder, then the anonymous fallback when enabled. File problems are
 * a StartupError naming the file and line. Resolves to null only without anonymous access and
 * without a credential; throws AuthenticationError for a presented but invalid credential (→ 401).
 */
export async function buildAuthenticator(config: AuthenticatorConfig): Promise<Authenticator> {
  const warn = config.warn ?? (() => {});
  const apiAudiences = config.apiAudiences ?? (config.serviceAccounts ? [config.serviceAccounts.issuer] : []);
  const authenticators: Authenticator[] = [];
  if (config.clientCa !== undefined) {
    try {
      authenticators.push(new X509Authenticator(config.clientCa));
    } catch (error) {
      throw new StartupError(`--client-ca-file: ${(error as Error).message}`, { cause: error });
    }
  }
  const tokens: TokenAuthenticator[] = [];
  if (config.tokenAuthFile !== undefined) tokens.push(audienceAgnostic(apiAudiences, StaticTokenAuthenticator.fromFile(config.tokenAuthFile, warn)));
  if (config.serviceAccounts) tokens.push(new ServiceAccountTokenAuthenticator({ apiAudiences, ...config.serviceAccounts }));
  tokens.push(...(config.tokenAuthenticators ?? []));
  if (tokens.length) authenticators.push(bearerTokenAuthenticator(unionTokenAuthenticator(tokens)));
  if (config.basicAuthFile !== undefined) authenticators.push(BasicAuthenticator.fromFile(config.basicAuthFile, warn));
  const authenticated = authenticatedGroupAdder(unionAuthenticator(authenticators));
  return config.anonymous ? withAnonymous(authenticated) : authenticated;
}

/**
 * Service-account tokens (kube.md §2.3): bound JWTs signed with a key pair kept under the data
 * directory, issued for the `serviceaccounts/token` subresource (`kubectl create token`) and
 * verified on every request — issuer, signature, expiry, audiences, and that the service account
 * (and the object the token is bound to) still exists with the same uid.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SignJWT, decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import { StartupError } from '../../common/errors.js';
import { AllServiceAccountsGroup, AuthenticationError, ServiceAccountUsernamePrefix, type AuthenticationResult } from './types.js';
import type { TokenAuthenticator } from './union.js';

export type ServiceAccountSigningAlgorithm = 'ES256' | 'RS256';

/** A public key tokens are verified with. */
export interface ServiceAccountPublicKey {
  readonly kid: string;
  readonly alg: ServiceAccountSigningAlgorithm;
  readonly key: KeyObject;
}

export interface ServiceAccountRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** The object a token is bound to (TokenRequest `spec.boundObjectRef`). */
export interface BoundObjectRef {
  readonly kind: 'Pod' | 'Secret' | 'Node';
  readonly name: string;
  readonly uid: string;
}

export interface TokenRequestOptions {
  /** Empty: the server's API audiences. */
  readonly audiences: readonly string[];
  readonly expirationSeconds: number;
  readonly boundObject?: BoundObjectRef;
}

export const KeyFileName = 'service-account.key';
export const DefaultIssuer = 'https://kubernetes.default.svc.cluster.local';

function keyId(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ format: 'der', type: 'spki' })).digest('base64url');
}

function algorithmOf(key: KeyObject): ServiceAccountSigningAlgorithm {
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  throw new Error(`unsupported service account key type ${key.asymmetricKeyType} (want a P-256 EC or an RSA key)`);
}

/** Issues bound service-account tokens. One instance per server; its public key verifies them. */
export class ServiceAccountTokenIssuer {
  readonly publicKey: ServiceAccountPublicKey;

  private constructor(
    private readonly privateKey: KeyObject,
    readonly issuer: string,
    readonly apiAudiences: readonly string[],
  ) {
    const publicKey = createPublicKey(privateKey);
    this.publicKey = { kid: keyId(publicKey), alg: algorithmOf(privateKey), key: publicKey };
  }

  /**
   * Loads `<dataDir>/service-account.key` (PKCS#8 PEM, P-256 EC or RSA), or creates a P-256 key
   * there (mode 0600) when absent. Servers sharing one etcd must share this key to accept each
   * other's tokens: copy the file, or use fromPem.
   */
  static async open(dataDir: string, options: { issuer?: string; apiAudiences?: readonly string[] } = {}): Promise<ServiceAccountTokenIssuer> {
    const file = path.join(dataDir, KeyFileName);
    let pem: string;
    if (existsSync(file)) {
      pem = await readFile(file, 'utf8');
    } else {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
      await mkdir(dataDir, { recursive: true, mode: 0o700 });
      await writeFile(file, pem, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
        pem = await readFile(file, 'utf8');
      });
    }
    try {
      return ServiceAccountTokenIssuer.fromPem(pem, options);
    } catch (error) {
      throw new StartupError(`${file}: not a usable service account signing key: ${(error as Error).message}`, { cause: error });
    }
  }

  static fromPem(pem: string, options: { issuer?: string; apiAudiences?: readonly string[] } = {}): ServiceAccountTokenIssuer {
    const issuer = options.issuer ?? DefaultIssuer;
    return new ServiceAccountTokenIssuer(createPrivateKey(pem), issuer, options.apiAudiences?.length ? options.apiAudiences : [issuer]);
  }

  /** A signed token for `sa`; `expirationTimestamp` is RFC 3339 in whole seconds, as the TokenRequest status shows it. */
  async issue(sa: ServiceAccountRef, options: TokenRequestOptions): Promise<{ token: string; expirationTimestamp: string }> {
    const now = Math.floor(Date.now() / 1000);
    const exp = now + options.expirationSeconds;
    const bound = options.boundObject;
    const kubernetes: Record<string, unknown> = {
      namespace: sa.namespace,
      serviceaccount: { name: sa.name, uid: sa.uid },
      ...(bound ? { [bound.kind.toLowerCase()]: { name: bound.name, uid: bound.uid } } : {}),
    };
    const token = await new SignJWT({ 'kubernetes.io': kubernetes })
      .setProtectedHeader({ alg: this.publicKey.alg, kid: this.publicKey.kid })
      .setIssuer(this.issuer)
      .setSubject(`${ServiceAccountUsernamePrefix}${sa.namespace}:${sa.name}`)
      .setAudience([...(options.audiences.length ? options.audiences : this.apiAudiences)])
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(this.privateKey);
    return { token, expirationTimestamp: new Date(exp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  }
}

export interface ServiceAccountAuthenticatorOptions {
  readonly issuer: string;
  /** The server's own audiences, used when a request names none (default: the issuer). */
  readonly apiAudiences?: readonly string[];
  readonly verificationKeys: readonly ServiceAccountPublicKey[];
  /** Whether the service account still exists with this uid. A token of a deleted account stops working. */
  isActive(namespace: string, name: string, uid: string): Promise<boolean>;
  /** Whether the object a token is bound to still exists with this uid (default: yes). */
  isBoundObjectActive?(namespace: string, ref: BoundObjectRef): Promise<boolean>;
}

/** Go's `%q` of a []string, as upstream's audience error prints it. */
const goQuoteList = (items: readonly string[]): string => `[${items.map((i) => JSON.stringify(i)).join(' ')}]`;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export class ServiceAccountTokenAuthenticator implements TokenAuthenticator {
  private readonly apiAudiences: readonly string[];

  constructor(private readonly options: ServiceAccountAuthenticatorOptions) {
    this.apiAudiences = options.apiAudiences?.length ? options.apiAudiences : [options.issuer];
  }

  async authenticateToken(token: string, audiences?: readonly string[]): Promise<AuthenticationResult | null> {
    let claims: Json;
    let kid: string | undefined;
    try {
      claims = decodeJwt(token) as Json;
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return null;
    }
    if (claims['iss'] !== this.options.issuer) return null;
    const candidates = this.options.verificationKeys.filter((k) => kid === undefined || k.kid === kid);
    let verified = false;
    for (const key of candidates) {
      try {
        await jwtVerify(token, key.key, { issuer: this.options.issuer, algorithms: [key.alg] });
        verified = true;
        break;
      } catch (error) {
        if (error instanceof joseErrors.JWTExpired) throw new AuthenticationError('service account token has expired');
        if (error instanceof joseErrors.JWTClaimValidationFailed) throw new AuthenticationError(`service account token is invalid: ${error.message}`);
      }
    }
    if (!verified) throw new AuthenticationError('service account token signature could not be verified');

    const tokenAudiences = Array.isArray(claims['aud']) ? (claims['aud'] as unknown[]).map(str) : [str(claims['aud'])].filter(Boolean);
    const requested = audiences?.length ? audiences : this.apiAudiences;
    const valid = tokenAudiences.filter((a) => requested.includes(a));
    if (valid.length === 0) {
      throw new AuthenticationError(`token audiences ${goQuoteList(tokenAudiences)} is invalid for the target audiences ${goQuoteList(requested)}`);
    }

    const kubernetes = obj(claims['kubernetes.io']);
    const namespace = str(kubernetes['namespace']);
    const sa = obj(kubernetes['serviceaccount']);
    const name = str(sa['name']);
    const uid = str(sa['uid']);
    if (!namespace || !name || !uid || claims['sub'] !== `${ServiceAccountUsernamePrefix}${namespace}:${name}`) {
      throw new AuthenticationError('service account token is missing its kubernetes.io claims');
    }
    if (!(await this.options.isActive(namespace, name, uid))) {
      throw new AuthenticationError(`service account ${namespace}/${name} (uid ${uid}) no longer exists`);
    }
    const extra: Record<string, string[]> = {};
    for (const kind of ['Pod', 'Secret', 'Node'] as const) {
      const ref = obj(kubernetes[kind.toLowerCase()]);
      if (!str(ref['name'])) continue;
      const bound: BoundObjectRef = { kind, name: str(ref['name']), uid: str(ref['uid']) };
      if (this.options.isBoundObjectActive && !(await this.options.isBoundObjectActive(namespace, bound))) {
        throw new AuthenticationError(`the ${kind.toLowerCase()} ${kind === 'Node' ? bound.name : `${namespace}/${bound.name}`} this token is bound to no longer exists`);
      }
      if (kind === 'Pod') {
        extra['authentication.kubernetes.io/pod-name'] = [bound.name];
        extra['authentication.kubernetes.io/pod-uid'] = [bound.uid];
      }
      if (kind === 'Node') {
        extra['authentication.kubernetes.io/node-name'] = [bound.name];
        extra['authentication.kubernetes.io/node-uid'] = [bound.uid];
      }
    }
    if (str(claims['jti'])) extra['authentication.kubernetes.io/credential-id'] = [`JTI=${str(claims['jti'])}`];
    return {
      user: {
        name: `${ServiceAccountUsernamePrefix}${namespace}:${name}`,
        uid,
        groups: [AllServiceAccountsGroup, `${AllServiceAccountsGroup}:${namespace}`],
        extra,
      },
      audiences: valid,
    };
  }
}

import {
  X509Certificate,
  constants,
  createHmac,
  createPrivateKey,
  createPublicKey,
  sign as cryptoSign,
  verify as cryptoVerify,
  type KeyObject,
} from 'node:crypto';
import { RegoObject, num, parseJSON, stringifyJSON, type Value } from '../value/index.js';
import { BuiltinError, defineBuiltins, type BuiltinContext } from './registry.js';
import { constantTimeEqual } from './crypto.js';
import { padBase64url } from './encoding.js';
import { obj, str } from './operands.js';
import { T, anyObject } from './types.js';

/**
 * `io.jwt.*`: JWS compact tokens verified and signed with node:crypto (synchronously, as builtins
 * must be), keys from PEM certificates, PEM public keys, JWKs or JWK sets. Semantics and error
 * texts follow OPA: a bad signature is `false`/unverified, a malformed token or key is an error.
 */

const ALGORITHMS = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'HS256', 'HS384', 'HS512', 'EdDSA']);

interface Token {
  header: string;
  payload: string;
  signature: string;
}

function splitToken(v: Value): Token {
  const s = str(v);
  if (!s.includes('.')) throw new BuiltinError('encoded JWT had no period separators');
  const parts = s.split('.');
  if (parts.length !== 3) throw new BuiltinError(`encoded JWT must have 3 sections, found ${parts.length}`);
  return { header: parts[0]!, payload: parts[1]!, signature: parts[2]! };
}

/** base64url with the padding repair OPA applies (RFC 7515 appendix C). */
function base64urlBytes(s: string): Buffer {
  const text = padBase64url(s);
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(text) || text.length % 4 !== 0) {
    const bad = [...text].findIndex((c) => !/[A-Za-z0-9_-]/.test(c));
    throw new BuiltinError(`illegal base64 data at input byte ${bad < 0 ? text.length : bad}`);
  }
  return Buffer.from(text, 'base64url');
}

function jsonObject(text: string, what: string): RegoObject {
  let v: Value;
  try {
    v = parseJSON(text);
  } catch (e) {
    throw new BuiltinError(`${what}invalid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!(v instanceof RegoObject)) throw new BuiltinError(`${what}decoded JSON type was not an Object`);
  return v;
}

function decodeHeader(t: Token): RegoObject {
  let text: string;
  try {
    text = base64urlBytes(t.header).toString('utf8');
  } catch (e) {
    throw new BuiltinError(`JWT header had invalid encoding: ${(e as Error).message}`);
  }
  const header = jsonObject(text, 'bad JWT header: ');
  if (header.has('enc')) throw new BuiltinError('JWT is a JWE object, which is not supported');
  return header;
}

function decodePayload(t: Token): string {
  try {
    return base64urlBytes(t.payload).toString('utf8');
  } catch (e) {
    throw new BuiltinError(`JWT payload had invalid encoding: ${(e as Error).message}`);
  }
}

// ---- keys -----------------------------------------------------------------------------------------

interface VerificationKey {
  key: KeyObject | Buffer;
  alg: string;
  kid: string;
}

function keysFromCertOrJWK(text: string, ctx: BuiltinContext): VerificationKey[] {
  const cacheKey = `io.jwt.keys\u0000${text}`;
  const cached = ctx.cache.get(cacheKey) as VerificationKey[] | undefined;
  if (cached) return cached;
  const keys = parseKeys(text);
  ctx.cache.set(cacheKey, keys);
  return keys;
}

function parseKeys(text: string): VerificationKey[] {
  const pem = /-----BEGIN ([A-Z ]+)-----/.exec(text);
  if (pem) {
    const end = text.indexOf(`-----END ${pem[1]}-----`);
    if (end >= 0 && text.slice(end + `-----END ${pem[1]}-----`.length).trim() !== '')
      throw new BuiltinError('extra data after a PEM certificate block');
    if (pem[1] === 'CERTIFICATE') {
      try {
        return [{ key: new X509Certificate(text).publicKey, alg: '', kid: '' }];
      } catch (e) {
        throw new BuiltinError(`failed to parse a PEM certificate: ${(e as Error).message}`);
      }
    }
    if (pem[1] === 'PUBLIC KEY') {
      try {
        return [{ key: createPublicKey(text), alg: '', kid: '' }];
      } catch (e) {
        throw new BuiltinError(`failed to parse a PEM public key: ${(e as Error).message}`);
      }
    }
    throw new BuiltinError('failed to extract a Key from the PEM certificate');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new BuiltinError(`failed to parse a JWK key (set): ${(e as Error).message}`);
  }
  const list = isRecord(parsed) && Array.isArray(parsed.keys) ? (parsed.keys as unknown[]) : [parsed];
  const out: VerificationKey[] = [];
  for (const jwk of list) {
    if (!isRecord(jwk)) throw new BuiltinError('failed to parse a JWK key (set): invalid key');
    const alg = typeof jwk.alg === 'string' ? jwk.alg : '';
    if (alg !== '' && !ALGORITHMS.has(alg)) continue;
    out.push({ key: jwkKey(jwk, false), alg, kid: typeof jwk.kid === 'string' ? jwk.kid : '' });
  }
  return out;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function jwkKey(jwk: Record<string, unknown>, priv: boolean): KeyObject | Buffer {
  if (jwk.kty === 'oct') {
    if (typeof jwk.k !== 'string') throw new BuiltinError('failed to parse a JWK key (set): missing "k"');
    return Buffer.from(jwk.k, 'base64url');
  }
  try {
    return priv
      ? createPrivateKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' })
      : createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
  } catch (e) {
    throw new BuiltinError(`failed to parse a JWK key (set): ${(e as Error).message}`);
  }
}

// ---- signatures -------------------------------------------------------------------------------------

const HASHES: Record<string, string> = { '256': 'sha256', '384': 'sha384', '512': 'sha512' };

/** Verifies `signature` over `data` with `alg`; a key of the wrong type simply does not verify. */
function verifySignature(alg: string, key: KeyObject | Buffer, data: Buffer, signature: Buffer): boolean {
  const family = alg.slice(0, 2);
  const digest = HASHES[alg.slice(2)];
  try {
    if (family === 'HS') {
      if (!Buffer.isBuffer(key) || !digest) return false;
      return constantTimeEqual(createHmac(digest, key).update(data).digest(), signature);
    }
    if (Buffer.isBuffer(key)) return false;
    if (alg === 'EdDSA') return key.asymmetricKeyType === 'ed25519' && cryptoVerify(null, data, key, signature);
    if (!digest) return false;
    if (family === 'RS' || family === 'PS') {
      if (key.asymmetricKeyType !== 'rsa') return false;
      return cryptoVerify(
        digest,
        data,
        family === 'RS'
          ? { key, padding: constants.RSA_PKCS1_PADDING }
          : { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO },
        signature,
      );
    }
    if (family === 'ES') {
      if (key.asymmetricKeyType !== 'ec') return false;
      return cryptoVerify(digest, data, { key, dsaEncoding: 'ieee-p1363' }, signature);
    }
  } catch {
    return false;
  }
  return false;
}

function signData(alg: string, key: KeyObject | Buffer, data: Buffer): Buffer {
  const family = alg.slice(0, 2);
  const digest = HASHES[alg.slice(2)];
  if (family === 'HS') {
    if (!Buffer.isBuffer(key)) throw new BuiltinError(`invalid key for ${alg}`);
    return createHmac(digest!, key).update(data).digest();
  }
  if (Buffer.isBuffer(key)) throw new BuiltinError(`invalid key for ${alg}`);
  try {
    if (alg === 'EdDSA') return cryptoSign(null, data, key);
    if (family === 'RS') return cryptoSign(digest!, data, { key, padding: constants.RSA_PKCS1_PADDING });
    if (family === 'PS')
      return cryptoSign(digest!, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST });
    return cryptoSign(digest!, data, { key, dsaEncoding: 'ieee-p1363' });
  } catch (e) {
    throw new BuiltinError(`failed to sign: ${(e as Error).message}`);
  }
}

/** io.jwt.verify_*: the header `kid` picks a JWKS key when it matches; otherwise any key may verify. */
function verifyWith(alg: string, tokenValue: Value, keyText: Value, ctx: BuiltinContext): boolean {
  const t = splitToken(tokenValue);
  if (alg.startsWith('HS')) {
    const data = Buffer.from(`${t.header}.${t.payload}`, 'utf8');
    return verifySignature(alg, Buffer.from(str(keyText), 'utf8'), data, base64urlBytes(t.signature));
  }
  const keys = keysFromCertOrJWK(str(keyText), ctx);
  const signature = base64urlBytes(t.signature);
  const header = decodeHeader(t);
  const kid = header.get('kid');
  const headerAlg = header.get('alg');
  const data = Buffer.from(`${t.header}.${t.payload}`, 'utf8');
  if (typeof kid === 'string' && kid !== '') {
    const match = keys.find((k) => k.kid === kid);
    if (match) return verifySignature(alg, match.key, data, signature);
  }
  for (const k of keys) {
    if (k.alg !== '' && k.alg !== headerAlg) continue;
    if (verifySignature(alg, k.key, data, signature)) return true;
  }
  return false;
}

// ---- decode_verify ----------------------------------------------------------------------------------

interface Constraints {
  secret: string;
  alg: string;
  iss: string;
  aud: string;
  keys?: VerificationKey[];
  timeSec: number;
}

function constraintsOf(o: RegoObject, ctx: BuiltinContext): Constraints {
  const c: Constraints = { secret: '', alg: '', iss: '', aud: '', timeSec: -1 };
  const stringConstraint = (name: string, v: Value): string => {
    if (typeof v !== 'string') throw new BuiltinError(`${name} constraint: must be a string`);
    return v;
  };
  for (const [k, v] of o.entries()) {
    switch (k) {
      case 'cert':
        c.keys = keysFromCertOrJWK(stringConstraint('cert', v), ctx);
        break;
      case 'secret':
        c.secret = stringConstraint('secret', v);
        break;
      case 'alg':
        c.alg = stringConstraint('alg', v);
        break;
      case 'iss':
        c.iss = stringConstraint('iss', v);
        break;
      case 'aud':
        c.aud = stringConstraint('aud', v);
        break;
      case 'time':
        c.timeSec = timeSeconds(v);
        break;
      default:
        throw new BuiltinError(`unknown token validation constraint: ${typeof k === 'string' ? k : stringifyJSON(k)}`);
    }
  }
  if (c.timeSec === -1) c.timeSec = Number(ctx.timeNs) / 1e9;
  const keyConstraints = (c.keys ? 1 : 0) + (c.secret !== '' ? 1 : 0);
  if (keyConstraints > 1) throw new BuiltinError('duplicate key constraints');
  if (keyConstraints < 1) throw new BuiltinError('no key constraint');
  return c;
}

function timeSeconds(v: Value): number {
  if (!num.isNumber(v)) throw new BuiltinError('token time constraint: must be a number');
  const t = num.toFloat(v);
  if (t < 0) throw new BuiltinError('token time constraint: must not be negative');
  return t / 1e9;
}

const KNOWN_HEADERS = new Set(['alg', 'kid', 'typ', 'cty', 'crit']);

/** RFC 7515 header checks: alg present, string-typed fields, understood critical parameters. */
function headerValid(header: RegoObject): boolean {
  let crit: Set<string> | undefined;
  for (const [k, v] of header.entries()) {
    if (k === 'crit') {
      if (!Array.isArray(v)) throw new BuiltinError('crit: must be a list');
      crit = new Set(v.filter((x): x is string => typeof x === 'string'));
      if (crit.size === 0) throw new BuiltinError('crit: must be a nonempty list');
    } else if (typeof k === 'string' && KNOWN_HEADERS.has(k) && typeof v !== 'string') {
      throw new BuiltinError(`${k}: must be a string`);
    }
  }
  if (typeof header.get('alg') !== 'string' || header.get('alg') === '') return false;
  for (const k of header.keys()) if (typeof k === 'string' && !KNOWN_HEADERS.has(k) && crit?.has(k)) return false;
  return true;
}

function decodeVerify(tokenValue: Value, c: Constraints): Value {
  const unverified: Value = [false, new RegoObject(), new RegoObject()];
  let current = tokenValue;
  let header: RegoObject;
  let payloadText: string;
  for (;;) {
    const t = splitToken(current);
    header = decodeHeader(t);
    if (!headerValid(header)) return unverified;
    const alg = header.get('alg') as string;
    if (c.alg !== '' && c.alg !== alg) return unverified;
    const signature = base64urlBytes(t.signature);
    const data = Buffer.from(`${t.header}.${t.payload}`, 'utf8');
    let verified = false;
    if (c.keys) {
      const kid = header.get('kid');
      const match = typeof kid === 'string' && kid !== '' ? c.keys.find((k) => k.kid === kid) : undefined;
      if (match) verified = verifySignature(alg, match.key, data, signature);
      else verified = c.keys.some((k) => (k.alg === '' || k.alg === alg) && verifySignature(alg, k.key, data, signature));
    } else verified = verifySignature(alg, Buffer.from(c.secret, 'utf8'), data, signature);
    if (!verified) return unverified;
    payloadText = decodePayload(t);
    const cty = header.get('cty');
    if (typeof cty === 'string' && cty.toUpperCase() === 'JWT') {
      current = payloadText;
      continue;
    }
    break;
  }
  const payload = jsonObject(payloadText, '');
  if (c.iss !== '') {
    const iss = payload.get('iss');
    if (iss === undefined || iss !== c.iss) return unverified;
  }
  const aud = payload.get('aud');
  if (aud !== undefined) {
    const ok = typeof aud === 'string' ? aud === c.aud : Array.isArray(aud) && aud.some((a) => typeof a === 'string' && a === c.aud);
    if (!ok) return unverified;
  } else if (c.aud !== '') return unverified;
  const exp = payload.get('exp');
  if (exp !== undefined) {
    if (!num.isNumber(exp)) throw new BuiltinError('exp value must be a number');
    if (!(c.timeSec < num.toFloat(exp))) return unverified;
  }
  const nbf = payload.get('nbf');
  if (nbf !== undefined) {
    if (!num.isNumber(nbf)) throw new BuiltinError('nbf value must be a number');
    if (c.timeSec < num.toFloat(nbf)) return unverified;
  }
  return [true, header, payload];
}

// ---- encode_sign ------------------------------------------------------------------------------------

function encodeSign(headerText: string, payloadText: string, jwkText: string): string {
  let jwks: unknown;
  try {
    jwks = JSON.parse(jwkText);
  } catch (e) {
    throw new BuiltinError(`failed to parse jwk: ${(e as Error).message}`);
  }
  const list = isRecord(jwks) && Array.isArray(jwks.keys) ? (jwks.keys as unknown[]) : [jwks];
  if (list.length === 0) throw new BuiltinError('no keys found in JWK set');
  const jwk = list[0];
  if (!isRecord(jwk)) throw new BuiltinError('failed to get first key from JWK set');
  let headers: unknown;
  try {
    headers = JSON.parse(headerText);
  } catch {
    headers = undefined;
  }
  const alg = isRecord(headers) ? headers.alg : undefined;
  if (typeof alg !== 'string') throw new BuiltinError(`missing or invalid 'alg' header`);
  if (!ALGORITHMS.has(alg)) throw new BuiltinError(`unknown JWS algorithm: ${alg}`);
  const typ = isRecord(headers) ? headers.typ : undefined;
  if ((typeof typ !== 'string' || typ === 'JWT') && !isJSON(payloadText))
    throw new BuiltinError('type is JWT but payload is not JSON');
  const signingInput = `${Buffer.from(headerText, 'utf8').toString('base64url')}.${Buffer.from(payloadText, 'utf8').toString('base64url')}`;
  const key = jwkKey(jwk, jwk.kty !== 'oct');
  const signature = signData(alg, key, Buffer.from(signingInput, 'utf8'));
  return `${signingInput}.${signature.toString('base64url')}`;
}

function isJSON(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

// ---- builtins ---------------------------------------------------------------------------------------

const verifier = (alg: string) => ({
  name: `io.jwt.verify_${alg.toLowerCase()}`,
  decl: T.fn([T.string, T.string], T.boolean),
  impl: ([token, key]: readonly Value[], ctx: BuiltinContext) => verifyWith(alg, token!, key!, ctx),
});

export const jwt = defineBuiltins(
  {
    name: 'io.jwt.decode',
    decl: T.fn([T.string], T.tuple(anyObject, anyObject, T.string)),
    impl: ([token]) => {
      let t = splitToken(token!);
      let header = decodeHeader(t);
      let payloadText = decodePayload(t);
      while (header.get('cty') === 'JWT') {
        t = splitToken(payloadText.replace(/^["']+|["']+$/g, ''));
        header = decodeHeader(t);
        payloadText = decodePayload(t);
      }
      const payload = jsonObject(payloadText, '');
      let signature: Buffer;
      try {
        signature = base64urlBytes(t.signature);
      } catch (e) {
        throw new BuiltinError(`JWT signature had invalid encoding: ${(e as Error).message}`);
      }
      return [header, payload, signature.toString('hex')];
    },
  },
  ...['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'HS256', 'HS384', 'HS512'].map(
    verifier,
  ),
  {
    name: 'io.jwt.decode_verify',
    nondeterministic: true,
    decl: T.fn([T.string, T.objectOf(T.string, T.any)], T.tuple(T.boolean, anyObject, anyObject)),
    impl: ([token, constraints], ctx) => decodeVerify(token!, constraintsOf(obj(constraints!), ctx)),
  },
  {
    name: 'io.jwt.encode_sign_raw',
    nondeterministic: true,
    decl: T.fn([T.string, T.string, T.string], T.string),
    impl: ([header, payload, key]) => encodeSign(str(header!), str(payload!), str(key!)),
  },
  {
    name: 'io.jwt.encode_sign',
    nondeterministic: true,
    decl: T.fn([anyObject, anyObject, anyObject], T.string),
    impl: ([header, payload, key]) =>
      encodeSign(
        stringifyJSON(header!, undefined, { escapeHTML: true }),
        stringifyJSON(payload!, undefined, { escapeHTML: true }),
        stringifyJSON(key!),
      ),
  },
);

/**
 * `--basic-auth-file` (kube.md §1; removed upstream in 1.19, kept here as the seed asks): HTTP Basic
 * credentials looked up by user name, the password compared as a keyed digest in constant time.
 */
import { StartupError } from '../../common/errors.js';
import { credentialDigest, digestsEqual } from './digest.js';
import { groupsColumn, readCsvRecords } from './csvfile.js';
import { AuthenticationError, type AuthenticationRequest, type AuthenticationResult, type Authenticator, type UserInfo } from './types.js';

const unknownUserDigest = credentialDigest('\0no such user\0');

/** Go's Request.BasicAuth: `Basic <base64(user:password)>`, scheme case-insensitive; null when not Basic or malformed. */
export function parseBasicAuthorization(header: string | undefined): { username: string; password: string } | null {
  if (!header || header.length < 6 || header.slice(0, 6).toLowerCase() !== 'basic ') return null;
  const encoded = header.slice(6);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return null;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export class BasicAuthenticator implements Authenticator {
  private constructor(private readonly users: ReadonlyMap<string, { readonly password: Buffer; readonly user: UserInfo }>) {}

  static fromFile(path: string, warn: (message: string) => void = () => {}): BasicAuthenticator {
    const users = new Map<string, { password: Buffer; user: UserInfo }>();
    for (const { line, fields } of readCsvRecords(path, '--basic-auth-file')) {
      if (fields.length < 3) {
        throw new StartupError(`basic auth file '${path}' must have at least 3 columns (password, user name, user uid), found ${fields.length} (line ${line})`);
      }
      const username = fields[1]!;
      if (users.has(username)) warn(`duplicate user has been found in basic auth file '${path}' (line ${line})`);
      users.set(username, { password: credentialDigest(fields[0]!), user: { name: username, uid: fields[2]!, groups: groupsColumn(fields) } });
    }
    return new BasicAuthenticator(users);
  }

  get size(): number {
    return this.users.size;
  }

  async authenticate(request: AuthenticationRequest): Promise<AuthenticationResult | null> {
    const header = request.headers.authorization;
    const credentials = parseBasicAuthorization(typeof header === 'string' ? header.trim() : undefined);
    if (!credentials) return null;
    const entry = this.users.get(credentials.username);
    const matches = digestsEqual(entry?.password ?? unknownUserDigest, credentialDigest(credentials.password));
    if (!entry || !matches) throw new AuthenticationError('invalid username/password combination');
    return { user: entry.user };
  }
}

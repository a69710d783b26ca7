/** `--token-auth-file` (kube.md §1): static bearer tokens, looked up by keyed digest, later duplicates win. */
import { StartupError } from '../../common/errors.js';
import { credentialDigest, digestKey } from './digest.js';
import { groupsColumn, readCsvRecords } from './csvfile.js';
import type { AuthenticationResult, UserInfo } from './types.js';
import type { TokenAuthenticator } from './union.js';

export class StaticTokenAuthenticator implements TokenAuthenticator {
  private constructor(private readonly users: ReadonlyMap<string, UserInfo>) {}

  /** Reads the file; `warn` receives the upstream warnings (empty token skipped, duplicate token). */
  static fromFile(path: string, warn: (message: string) => void = () => {}): StaticTokenAuthenticator {
    const users = new Map<string, UserInfo>();
    let recordNumber = 0;
    for (const { line, fields } of readCsvRecords(path, '--token-auth-file')) {
      if (fields.length < 3) {
        throw new StartupError(`token file '${path}' must have at least 3 columns (token, user name, user uid), found ${fields.length} (line ${line})`);
      }
      recordNumber++;
      if (fields[0] === '') {
        warn(`empty token has been found in token file '${path}', record number '${recordNumber}' (line ${line})`);
        continue;
      }
      const key = digestKey(credentialDigest(fields[0]!));
      if (users.has(key)) warn(`duplicate token has been found in token file '${path}', record number '${recordNumber}' (line ${line})`);
      users.set(key, { name: fields[1]!, uid: fields[2]!, groups: groupsColumn(fields) });
    }
    return new StaticTokenAuthenticator(users);
  }

  get size(): number {
    return this.users.size;
  }

  async authenticateToken(token: string): Promise<AuthenticationResult | null> {
    const user = this.users.get(digestKey(credentialDigest(token)));
    return user ? { user } : null;
  }
}

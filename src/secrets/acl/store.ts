/**
 * ACL policies under the barrier, with the parsed policies and the compiled ACLs of policy sets
 * cached until a policy changes.
 */
import { InvalidRequestError } from '../errors.js';
import { getJSON, putJSON, type StorageView } from '../storage-view.js';
import { Acl } from './acl.js';
import { DEFAULT_POLICY, parsePolicy, type Policy } from './policy.js';

/** Names users may not create or assign. */
const INTERNAL = new Set(['response-wrapping', 'control-group']);

export class PolicyStore {
  private readonly policies = new Map<string, Policy | null>();
  private readonly acls = new Map<string, Acl>();

  constructor(private readonly view: StorageView) {}

  async setup(): Promise<void> {
    if (!(await this.view.get('default'))) await this.write('default', DEFAULT_POLICY);
  }

  static normalise(name: string): string {
    return name.trim().toLowerCase();
  }

  async get(name: string): Promise<Policy | undefined> {
    name = PolicyStore.normalise(name);
    if (name === 'root') return { name: 'root', raw: '', rules: [] };
    const cached = this.policies.get(name);
    if (cached !== undefined) return cached ?? undefined;
    const stored = await getJSON<{ name: string; raw: string }>(this.view, name);
    const policy = stored ? parsePolicy(name, stored.raw) : undefined;
    this.policies.set(name, policy ?? null);
    return policy;
  }

  async exists(name: string): Promise<boolean> {
    return (await this.get(name)) !== undefined;
  }

  /** Stored policy names, sorted, without `root`. */
  async list(): Promise<string[]> {
    return (await this.view.list('')).filter((n) => !n.endsWith('/')).sort();
  }

  async write(name: string, raw: string): Promise<void> {
    name = PolicyStore.normalise(name);
    if (name === 'root') throw new InvalidRequestError('cannot update "root" policy');
    if (INTERNAL.has(name)) throw new InvalidRequestError(`cannot update "${name}" policy`);
    const policy = parsePolicy(name, raw);
    await putJSON(this.view, name, { name, raw });
    this.policies.set(name, policy);
    this.acls.clear();
  }

  async delete(name: string): Promise<void> {
    name = PolicyStore.normalise(name);
    if (name === 'root') throw new InvalidRequestError('cannot delete "root" policy');
    if (name === 'default') throw new InvalidRequestError('cannot delete default policy');
    await this.view.delete(name);
    this.policies.delete(name);
    this.acls.clear();
  }

  /** The compiled ACL of a set of policy names; unknown names contribute nothing. */
  async acl(names: readonly string[]): Promise<Acl> {
    const key = [...new Set(names)].sort().join('\n');
    const cached = this.acls.get(key);
    if (cached) return cached;
    const policies: Policy[] = [];
    for (const name of new Set(names)) {
      const policy = await this.get(name);
      if (policy) policies.push(policy);
    }
    const acl = new Acl(policies);
    this.acls.set(key, acl);
    return acl;
  }

  invalidate(): void {
    this.policies.clear();
    this.acls.clear();
  }
}

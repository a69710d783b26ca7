/**
 * A mount's (or a subsystem's) slice of storage: keys relative to a prefix, values as bytes or JSON.
 * Production views sit on the barrier (encrypted); `MemoryView` serves backend unit tests.
 */
export interface StorageView {
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, value: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  /** Names directly below `prefix` (which ends in `/` or is empty): `name` for leaves, `dir/` for folders; sorted. */
  list(prefix: string): Promise<string[]>;
  /** A view of the keys under `prefix` (which should end in `/`). */
  sub(prefix: string): StorageView;
}

export async function getJSON<T>(view: StorageView, key: string): Promise<T | undefined> {
  const bytes = await view.get(key);
  return bytes === undefined ? undefined : (JSON.parse(Buffer.from(bytes).toString('utf8')) as T);
}

export async function putJSON(view: StorageView, key: string, value: unknown): Promise<void> {
  await view.put(key, Buffer.from(JSON.stringify(value), 'utf8'));
}

/** Every key below `prefix`, recursively (relative to the view). */
export async function listRecursive(view: StorageView, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const name of await view.list(prefix)) {
    if (name.endsWith('/')) out.push(...(await listRecursive(view, prefix + name)));
    else out.push(prefix + name);
  }
  return out;
}

/** Children names of `prefix` from a flat, sorted set of full keys. */
export function childNames(keys: Iterable<string>, prefix: string): string[] {
  const names = new Set<string>();
  for (const key of keys) {
    if (!key.startsWith(prefix) || key.length === prefix.length) continue;
    const rest = key.slice(prefix.length);
    const slash = rest.indexOf('/');
    names.add(slash === -1 ? rest : rest.slice(0, slash + 1));
  }
  return [...names].sort();
}

/** An unencrypted in-memory view, for tests that drive one backend directly. */
export class MemoryView implements StorageView {
  constructor(
    private readonly entries: Map<string, Uint8Array> = new Map(),
    private readonly prefix = '',
  ) {}
  async get(key: string) {
    return this.entries.get(this.prefix + key);
  }
  async put(key: string, value: Uint8Array) {
    this.entries.set(this.prefix + key, value);
  }
  async delete(key: string) {
    this.entries.delete(this.prefix + key);
  }
  async list(prefix: string) {
    return childNames(this.entries.keys(), this.prefix + prefix);
  }
  sub(prefix: string): StorageView {
    return new MemoryView(this.entries, this.prefix + prefix);
  }
}

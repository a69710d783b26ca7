/**
 * Local user and group mappings of the directory-backed methods (idp and ldap): `groups/<name>`
 * gives a directory group policies, `users/<name>` gives one user policies and extra (local)
 * groups. A login's policies are the union over the user's groups and the user entry.
 *
 *   group/<escaped name>  → { policies }
 *   user/<escaped name>   → { groups, policies }
 *
 * Names are escaped in keys so that any group name (spaces, slashes) is one storage key.
 */
import { NotFoundError } from '../../errors.js';
import type { PathDef } from '../../framework/backend.js';
import type { Request } from '../../logical.js';
import { getJSON, putJSON, type StorageView } from '../../storage-view.js';

export interface GroupMapping {
  policies: string[];
}

export interface UserMapping {
  groups: string[];
  policies: string[];
}

export interface MappingOptions {
  /** How names are compared: idp keeps them as given, ldap lower-cases unless configured otherwise. */
  readonly normalize: (name: string, storage: StorageView) => Promise<string> | string;
}

const key = (kind: 'user' | 'group', name: string) => `${kind}/${encodeURIComponent(name)}`;

export class Mappings {
  constructor(private readonly options: MappingOptions) {}

  async user(storage: StorageView, name: string): Promise<UserMapping | undefined> {
    return getJSON<UserMapping>(storage, key('user', await this.options.normalize(name, storage)));
  }

  /** A group's mapping; when no exact match, a name differing only in case. */
  async group(storage: StorageView, name: string): Promise<GroupMapping | undefined> {
    const normalized = await this.options.normalize(name, storage);
    const exact = await getJSON<GroupMapping>(storage, key('group', normalized));
    if (exact) return exact;
    const lower = normalized.toLowerCase();
    for (const stored of await storage.list('group/')) {
      if (decodeURIComponent(stored).toLowerCase() === lower) return getJSON<GroupMapping>(storage, `group/${stored}`);
    }
    return undefined;
  }

  /**
   * The policies of a login: every mapped group among `directoryGroups` and the user's local
   * groups, plus the user's own. Also returns all group names (for group aliases).
   */
  async resolve(storage: StorageView, username: string, directoryGroups: readonly string[]): Promise<{ policies: string[]; groups: string[] }> {
    const user = await this.user(storage, username);
    const groups = [...new Set([...directoryGroups, ...(user?.groups ?? [])])];
    const policies: string[] = [];
    for (const group of groups) policies.push(...((await this.group(storage, group))?.policies ?? []));
    policies.push(...(user?.policies ?? []));
    return { policies: [...new Set(policies)], groups };
  }

  /** The `users`, `users/<name>`, `groups` and `groups/<name>` paths. */
  paths(): PathDef[] {
    const list = (kind: 'user' | 'group') => async (request: Request) => {
      const keys = (await request.storage.list(`${kind}/`)).map((k) => decodeURIComponent(k));
      if (keys.length === 0) throw new NotFoundError();
      return { data: { keys } };
    };
    const nameOf = async (request: Request, raw: string) => this.options.normalize(raw, request.storage);
    return [
      { pattern: 'users/?', operations: { list: list('user') }, synopsis: 'List the users with local mappings.' },
      { pattern: 'groups/?', operations: { list: list('group') }, synopsis: 'List the groups with local mappings.' },
      {
        pattern: 'users/(?<name>.+)',
        fields: {
          name: { type: 'string', description: 'Name of the user.' },
          groups: { type: 'comma-string-slice', description: 'Local groups the user is added to.' },
          policies: { type: 'comma-string-slice', description: 'Policies granted to the user.' },
        },
        existenceCheck: async (request, fields) => (await request.storage.get(key('user', await nameOf(request, fields.string('name'))))) !== undefined,
        operations: {
          read: async (request, fields) => {
            const entry = await getJSON<UserMapping>(request.storage, key('user', await nameOf(request, fields.string('name'))));
            if (!entry) throw new NotFoundError();
            return { data: { groups: entry.groups, policies: entry.policies } };
          },
          update: async (request, fields) => {
            const k = key('user', await nameOf(request, fields.string('name')));
            const existing = await getJSON<UserMapping>(request.storage, k);
            const entry: UserMapping = {
              groups: fields.has('groups') ? fields.strings('groups') : (existing?.groups ?? []),
              policies: fields.has('policies') ? normalizePolicies(fields.strings('policies')) : (existing?.policies ?? []),
            };
            await putJSON(request.storage, k, entry);
            return undefined;
          },
          delete: async (request, fields) => {
            await request.storage.delete(key('user', await nameOf(request, fields.string('name'))));
            return undefined;
          },
        },
        synopsis: "Manage a user's local groups and policies.",
      },
      {
        pattern: 'groups/(?<name>.+)',
        fields: {
          name: { type: 'string', description: 'Name of the group, as the directory reports it.' },
          policies: { type: 'comma-string-slice', description: 'Policies granted to members.' },
        },
        existenceCheck: async (request, fields) => (await request.storage.get(key('group', await nameOf(request, fields.string('name'))))) !== undefined,
        operations: {
          read: async (request, fields) => {
            const entry = await getJSON<GroupMapping>(request.storage, key('group', await nameOf(request, fields.string('name'))));
            if (!entry) throw new NotFoundError();
            return { data: { policies: entry.policies } };
          },
          update: async (request, fields) => {
            const entry: GroupMapping = { policies: normalizePolicies(fields.strings('policies')) };
            await putJSON(request.storage, key('group', await nameOf(request, fields.string('name'))), entry);
            return undefined;
          },
          delete: async (request, fields) => {
            await request.storage.delete(key('group', await nameOf(request, fields.string('name'))));
            return undefined;
          },
        },
        synopsis: "Manage a directory group's policies.",
      },
    ];
  }
}

function normalizePolicies(policies: readonly string[]): string[] {
  return [...new Set(policies.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))];
}

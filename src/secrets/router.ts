/**
 * The mount table and the router. Secrets engines are mounted at `<path>/`, auth methods at
 * `auth/<path>/`; `sys/` and `auth/token/` are built in. A request goes to the mount with the
 * longest matching prefix. The table of routes is rebuilt on every mount change (compile once,
 * serve many), never per request.
 */
import type { Backend } from './framework/backend.js';
import type { MountInfo } from './logical.js';
import type { StorageView } from './storage-view.js';

export interface MountConfig {
  /** Seconds; 0 = the server's default. */
  default_lease_ttl: number;
  max_lease_ttl: number;
  force_no_cache: boolean;
  token_type?: string;
  listing_visibility?: string;
}

/** One row of `sys/mounts` or `sys/auth`, as persisted (under the barrier) and as listed. */
export interface MountEntry {
  /** With trailing slash, without the `auth/` prefix for auth mounts: `secret/`, `userpass/`. */
  path: string;
  type: string;
  description: string;
  accessor: string;
  uuid: string;
  config: MountConfig;
  options: Record<string, string> | null;
  local: boolean;
  seal_wrap: boolean;
  external_entropy_access: boolean;
  plugin_version: string;
}

export type MountKind = 'secret' | 'auth';

export interface Route {
  readonly entry: MountEntry;
  readonly kind: MountKind;
  /** Full prefix inside `/v1/`: `secret/`, `auth/userpass/`, `sys/`. */
  readonly prefix: string;
  readonly info: MountInfo;
  readonly backend: Backend;
  readonly storage: StorageView;
}

export class Router {
  private routes: Route[] = [];

  /** Replace the whole routing table (after a mount change). */
  setRoutes(routes: Iterable<Route>): void {
    this.routes = [...routes].sort((a, b) => b.prefix.length - a.prefix.length);
  }

  all(): readonly Route[] {
    return this.routes;
  }

  /** The mount serving `path` (relative to `/v1/`), by longest prefix; `secret` matches `secret/`. */
  match(path: string): Route | undefined {
    for (const route of this.routes) {
      if (path.startsWith(route.prefix) || path + '/' === route.prefix) return route;
    }
    return undefined;
  }

  byPrefix(prefix: string): Route | undefined {
    return this.routes.find((r) => r.prefix === prefix);
  }

  byAccessor(accessor: string): Route | undefined {
    return this.routes.find((r) => r.entry.accessor === accessor);
  }
}

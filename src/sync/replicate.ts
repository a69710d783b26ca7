/**
 * kube-mgmt's replication: mirror every object of a resource into the policy engine's data at
 * `<root>/<resource>/<namespace>/<name>` (cluster-scoped: `<root>/<resource>/<name>`), with a full
 * PUT after every (re)list and per-object PUT / JSON-Patch remove after that.
 */
import { UsageError } from '../common/errors.js';
import { jsonPointer, type PolicyEngine } from './engine.js';
import type { KubeObject } from './kube.js';
import type { ReflectorHandler } from './reflector.js';

export interface ReplicatedResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly namespaced: boolean;
}

/** `[group/]version/resource`, as `--replicate` and `--replicate-cluster` take it. */
export function parseReplicatedResource(text: string, namespaced: boolean): ReplicatedResource {
  const parts = text.split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) {
    throw new UsageError(`invalid resource ${JSON.stringify(text)}: want [group/]version/resource`);
  }
  const [group, version, resource] = parts.length === 3 ? parts : ['', parts[0]!, parts[1]!];
  return { group: group!, version: version!, resource: resource!, namespaced };
}

/** The API path that lists the resource in every namespace. */
export function listPath(r: ReplicatedResource): string {
  return r.group ? `/apis/${r.group}/${r.version}/${r.resource}` : `/api/${r.version}/${r.resource}`;
}

export class Replicator implements ReflectorHandler {
  constructor(
    private readonly engine: PolicyEngine,
    private readonly target: ReplicatedResource,
    private readonly root: string,
    private readonly ignoreNamespaces: ReadonlySet<string>,
  ) {}

  async replace(objects: readonly KubeObject[]): Promise<void> {
    const tree: Record<string, unknown> = {};
    for (const object of objects) {
      const path = this.relativePath(object);
      if (!path) continue;
      let node = tree;
      for (const segment of path.slice(0, -1)) node = (node[segment] ??= {}) as Record<string, unknown>;
      node[path[path.length - 1]!] = object;
    }
    await this.engine.putData([this.root, this.target.resource], tree);
  }

  async upsert(object: KubeObject): Promise<void> {
    const path = this.relativePath(object);
    if (path) await this.engine.putData([this.root, this.target.resource, ...path], object);
  }

  async remove(object: KubeObject): Promise<void> {
    const path = this.relativePath(object);
    if (path) await this.engine.patchData([{ op: 'remove', path: jsonPointer([this.root, this.target.resource, ...path]) }]);
  }

  private relativePath(object: KubeObject): string[] | undefined {
    const { namespace, name } = object.metadata;
    if (!this.target.namespaced) return [name];
    if (!namespace || this.ignoreNamespaces.has(namespace)) return undefined;
    return [namespace, name];
  }
}

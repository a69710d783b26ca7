/**
 * The control loops this server runs beside the API (there is no controller-manager):
 *  - bootstrap: the system namespaces and the bootstrap RBAC policy, created when absent;
 *  - informers that feed the RBAC index (roles and bindings) and the Node authorizer's graph (pods)
 *    from list + watch, so every server sharing one etcd sees every server's writes;
 *  - ClusterRole aggregation: aggregated roles' rules are written back when they differ;
 *  - the `default` ServiceAccount of every namespace.
 * `start()` resolves once the initial lists are applied, so no request is authorized against an
 * empty index.
 */
import type { Logger } from '../common/log.js';
import { aggregateClusterRoles, bootstrapPolicy, rulesEqual, type NodeGraph, type RbacIndex } from './authz/index.js';
import { StatusError } from './errors.js';
import type { KubeObject } from './object.js';
import { SYSTEM_NAMESPACES, type Registry, type WriteContext } from './registry/registry.js';
import type { Store, StoreWatchEvent } from './registry/store.js';
import type { ResourceType } from './resources/types.js';

/** The identity the server's own loops write as. */
const SYSTEM_USER = { name: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] };

type Handler = (event: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject }) => void;

/** List + watch of one kind; relists after the watch ends (for example after compaction). */
class Informer {
  private watcher: { close(): void } | undefined;
  private stopped = false;
  private readonly known = new Map<string, KubeObject>();

  constructor(
    private readonly store: Store,
    private readonly handler: Handler,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const page = await this.store.list('');
    const seen = new Set<string>();
    for (const object of page.items) {
      const key = keyOf(object);
      seen.add(key);
      this.deliver({ type: this.known.has(key) ? 'MODIFIED' : 'ADDED', object });
    }
    for (const [key, object] of [...this.known]) if (!seen.has(key)) this.deliver({ type: 'DELETED', object });
    this.watcher = await this.store.watch(
      '',
      Number(page.resourceVersion),
      (events: StoreWatchEvent[]) => {
        for (const event of events) this.deliver({ type: event.type, object: event.object });
      },
      (error) => {
        if (this.stopped) return;
        this.logger.warn({ resource: this.store.type.resource, err: error.message }, 'watch ended; relisting');
        setTimeout(() => void this.start().catch((e: unknown) => this.logger.error({ err: e }, 'relist failed')), 1000).unref();
      },
    );
    if (this.stopped) this.watcher.close();
  }

  private deliver(event: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject }): void {
    const key = keyOf(event.object);
    if (event.type === 'DELETED') this.known.delete(key);
    else this.known.set(key, event.object);
    try {
      this.handler(event);
    } catch (error) {
      this.logger.error({ err: error, resource: this.store.type.resource }, 'informer handler failed');
    }
  }

  objects(): KubeObject[] {
    return [...this.known.values()];
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
  }
}

function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

export class Controllers {
  private readonly informers: Informer[] = [];
  private clusterRoleInformer: Informer | undefined;
  private aggregating = false;
  private aggregateAgain = false;

  constructor(
    private readonly registry: Registry,
    private readonly rbac: RbacIndex,
    private readonly nodes: NodeGraph,
    private readonly logger: Logger,
  ) {}

  private type(group: string, resource: string): ResourceType {
    return this.registry.resources.lookup(group, 'v1', resource)!;
  }

  private context(): WriteContext {
    return { user: SYSTEM_USER, version: 'v1', dryRun: false, fieldManager: 'portcullis-apiserver' };
  }

  async start(): Promise<void> {
    await this.bootstrap();
    const rbacGroup = 'rbac.authorization.k8s.io';
    const clusterRoles = this.type(rbacGroup, 'clusterroles');
    for (const resource of ['roles', 'rolebindings', 'clusterrolebindings']) {
      this.informers.push(new Informer(this.registry.store(this.type(rbacGroup, resource)), (event) => this.rbac.apply(withKind(event, this.type(rbacGroup, resource))), this.logger));
    }
    const roleInformer = new Informer(
      this.registry.store(clusterRoles),
      (event) => {
        this.rbac.apply(withKind(event, clusterRoles));
        this.scheduleAggregation();
      },
      this.logger,
    );
    this.informers.push(roleInformer);
    this.clusterRoleInformer = roleInformer;
    const pods = this.type('', 'pods');
    this.informers.push(new Informer(this.registry.store(pods), (event) => this.nodes.apply(withKind(event, pods)), this.logger));
    const namespaces = this.type('', 'namespaces');
    this.informers.push(
      new Informer(this.registry.store(namespaces), (event) => {
        if (event.type === 'ADDED') void this.ensureDefaultServiceAccount(event.object.metadata.name!);
      }, this.logger),
    );
    for (const informer of this.informers) await informer.start();
  }

  stop(): void {
    for (const informer of this.informers) informer.stop();
  }

  /** Create what a fresh cluster has: the system namespaces and the bootstrap policy (only when absent). */
  private async bootstrap(): Promise<void> {
    const namespaces = this.type('', 'namespaces');
    for (const name of SYSTEM_NAMESPACES) await this.createIfAbsent(namespaces, '', { metadata: { name } });
    for (const object of bootstrapPolicy() as unknown as KubeObject[]) {
      const type = this.type('rbac.authorization.k8s.io', object.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings');
      await this.createIfAbsent(type, '', structuredClone(object));
    }
  }

  private async createIfAbsent(type: ResourceType, namespace: string, object: KubeObject): Promise<void> {
    if (await this.registry.store(type).find(namespace, object.metadata.name!)) return;
    try {
      await this.registry.create(type, namespace, object, this.context());
    } catch (error) {
      if (!(error instanceof StatusError && error.reason === 'AlreadyExists')) throw error;
    }
  }

  /** Create the namespace's `default` ServiceAccount when it is missing. */
  async ensureDefaultServiceAccount(namespace: string): Promise<void> {
    try {
      await this.createIfAbsent(this.type('', 'serviceaccounts'), namespace, { metadata: { name: 'default', namespace } });
    } catch (error) {
      if (!(error instanceof StatusError && error.code === 404)) this.logger.warn({ err: error, namespace }, 'cannot create the default service account');
    }
  }

  /** Coalesce bursts of ClusterRole events into one aggregation pass at a time. */
  private scheduleAggregation(): void {
    if (this.aggregating) {
      this.aggregateAgain = true;
      return;
    }
    this.aggregating = true;
    setImmediate(() => {
      void this.aggregate()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'ClusterRole aggregation failed'))
        .finally(() => {
          this.aggregating = false;
          if (this.aggregateAgain) {
            this.aggregateAgain = false;
            this.scheduleAggregation();
          }
        });
    });
  }

  private async aggregate(): Promise<void> {
    const informer = this.clusterRoleInformer;
    if (!informer) return;
    const roles = informer.objects();
    const wanted = aggregateClusterRoles(roles);
    const type = this.type('rbac.authorization.k8s.io', 'clusterroles');
    for (const [name, rules] of wanted) {
      const current = roles.find((r) => r.metadata.name === name);
      if (!current || rulesEqual(current.rules as never, rules as never)) continue;
      try {
        await this.registry.patch(type, '', name, 'merge', { rules, metadata: { resourceVersion: current.metadata.resourceVersion } }, { ...this.context(), fieldManager: 'clusterrole-aggregation-controller', force: false });
      } catch (error) {
        if (!(error instanceof StatusError && (error.reason === 'Conflict' || error.code === 404))) throw error;
      }
    }
  }
}

function withKind(event: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject }, type: ResourceType): { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject } {
  return { type: event.type, object: { ...event.object, apiVersion: `${type.group ? `${type.group}/` : ''}v1`, kind: type.kind } };
}

/**
 * The sync sidecar (kube-mgmt's job): ConfigMaps → policies and data, and replicated cluster
 * objects → data, in the policy engine.
 */
import type { Logger } from '../common/log.js';
import { ConfigMapSync, type ConfigMapSyncOptions } from './configmaps.js';
import { PolicyEngine, type EngineOptions } from './engine.js';
import { KubeClient } from './kube.js';
import type { ClusterConnection } from './kubeconfig.js';
import { Reflector } from './reflector.js';
import { listPath, Replicator, type ReplicatedResource } from './replicate.js';

export interface SidecarOptions {
  readonly cluster: ClusterConnection;
  readonly engine: EngineOptions;
  /** Namespaces whose ConfigMaps are loaded; empty or `*` = all. */
  readonly namespaces: readonly string[];
  readonly configMaps: ConfigMapSyncOptions;
  readonly replicate: readonly ReplicatedResource[];
  /** Root of replicated data (kube-mgmt's --replicate-path, default `kubernetes`). */
  readonly replicatePath: string;
  readonly replicateIgnoreNamespaces: readonly string[];
  readonly logger: Logger;
}

export class Sidecar {
  private readonly kube: KubeClient;
  private readonly engine: PolicyEngine;
  private readonly reflectors: Reflector[] = [];

  constructor(private readonly options: SidecarOptions) {
    this.kube = new KubeClient(options.cluster);
    this.engine = new PolicyEngine(options.engine);
    const { logger } = options;
    if (options.configMaps.enablePolicies || options.configMaps.enableData) {
      const handler = new ConfigMapSync(this.engine, this.kube, options.configMaps, logger);
      const all = options.namespaces.length === 0 || options.namespaces.includes('*');
      const paths = all ? ['/api/v1/configmaps'] : options.namespaces.map((ns) => `/api/v1/namespaces/${encodeURIComponent(ns)}/configmaps`);
      for (const path of paths) this.reflectors.push(new Reflector(this.kube, path, handler, logger));
    }
    const ignored = new Set(options.replicateIgnoreNamespaces);
    for (const target of options.replicate) {
      const handler = new Replicator(this.engine, target, options.replicatePath, ignored);
      this.reflectors.push(new Reflector(this.kube, listPath(target), handler, logger));
    }
  }

  /** Start every watch; resolves once each has loaded its first full list. */
  async start(): Promise<void> {
    for (const reflector of this.reflectors) reflector.start();
    await Promise.all(this.reflectors.map((r) => r.initialSync));
  }

  /** Resolves when every event received so far has been applied (for tests and orderly shutdown). */
  async idle(): Promise<void> {
    await Promise.all(this.reflectors.map((r) => r.idle()));
  }

  async close(): Promise<void> {
    for (const reflector of this.reflectors) reflector.stop();
    await this.idle();
    this.kube.close();
    this.engine.close();
  }
}

/**
 * Every kind the server serves, looked up by (group, version, resource) for URLs and by
 * (group, kind) for bodies and SMP/apply. Built once at start; the machinery never lists kinds by hand.
 */
import { admissionRegistrationResources } from './admissionregistration.js';
import { coreResources } from './core.js';
import { rbacResources } from './rbac.js';
import { reviewResources } from './reviews.js';
import type { ResourceType } from './types.js';

export class ResourceTable {
  private readonly byResource = new Map<string, ResourceType>();
  private readonly byKind = new Map<string, ResourceType>();
  /** group → versions served (preferred first). */
  readonly groups = new Map<string, string[]>();

  constructor(readonly all: readonly ResourceType[]) {
    for (const type of all) {
      for (const version of type.versions) {
        this.byResource.set(`${type.group}/${version}/${type.resource}`, type);
        const versions = this.groups.get(type.group) ?? [];
        if (!versions.includes(version)) versions.push(version);
        this.groups.set(type.group, versions);
      }
      this.byKind.set(`${type.group}/${type.kind}`, type);
    }
    for (const versions of this.groups.values()) versions.sort(compareVersions);
  }

  lookup(group: string, version: string, resource: string): ResourceType | undefined {
    return this.byResource.get(`${group}/${version}/${resource}`);
  }

  forKind(group: string, kind: string): ResourceType | undefined {
    return this.byKind.get(`${group}/${kind}`);
  }

  /** Kinds served at one group/version. */
  at(group: string, version: string): ResourceType[] {
    return this.all.filter((t) => t.group === group && t.versions.includes(version));
  }
}

/** Kubernetes version priority: GA > beta > alpha, higher numbers first (v1 > v1beta1). */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0];
    const stage = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return [stage, Number(m[1]), Number(m[3] ?? 0)];
  };
  const [ra, rb] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i]! - ra[i]!;
  return 0;
}

export function defaultResourceTable(): ResourceTable {
  return new ResourceTable([...coreResources, ...rbacResources, ...admissionRegistrationResources, ...reviewResources]);
}

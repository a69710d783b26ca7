/**
 * The authorizer chain of `--authorization-mode` (kube.md §3.7): the `system:masters` superuser
 * authorizer first, then each mode in order; the first allow or deny decides, and no opinion from
 * every authorizer carries their reasons joined by newlines.
 */
import { StartupError } from '../../common/errors.js';
import type { UserInfo } from '../authn/types.js';
import { SystemPrivilegedGroup } from '../authn/types.js';
import { NodeAuthorizer, type NodeGraph } from './node.js';
import type { RbacIndex } from './rbac.js';
import type { Attributes, AuthorizationResult, Authorizer, RuleResolver, SubjectRules } from './types.js';

export const AuthorizationModes = ['AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC'] as const;
export type AuthorizationMode = (typeof AuthorizationModes)[number];

export const alwaysAllow: Authorizer & RuleResolver = {
  authorize: () => ({ decision: 'allow', reason: '' }),
  rulesFor: () => ({
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  }),
};

export const alwaysDeny: Authorizer & RuleResolver = {
  authorize: () => ({ decision: 'no-opinion', reason: 'Everything is forbidden.' }),
  rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
};

/** Allows every request of a user in one of `groups` (upstream's privileged-groups authorizer). */
export function privilegedGroups(...groups: string[]): Authorizer {
  return {
    authorize: (attributes) =>
      attributes.user.groups.some((g) => groups.includes(g)) ? { decision: 'allow', reason: '' } : { decision: 'no-opinion', reason: '' },
  };
}

/** First allow or deny wins; otherwise no opinion with the reasons joined by "\n". */
export function unionAuthorizer(authorizers: readonly Authorizer[]): Authorizer {
  return {
    authorize(attributes: Attributes): AuthorizationResult {
      const reasons: string[] = [];
      for (const authorizer of authorizers) {
        const result = authorizer.authorize(attributes);
        if (result.decision !== 'no-opinion') return result;
        if (result.reason) reasons.push(result.reason);
      }
      return { decision: 'no-opinion', reason: reasons.join('\n') };
    },
  };
}

/** The rules of every resolver together; incomplete if any is, errors joined. */
export function unionRuleResolver(resolvers: readonly RuleResolver[]): RuleResolver {
  return {
    rulesFor(user: UserInfo, namespace: string): SubjectRules {
      const resourceRules: SubjectRules['resourceRules'][number][] = [];
      const nonResourceRules: SubjectRules['nonResourceRules'][number][] = [];
      const errors: string[] = [];
      let incomplete = false;
      for (const resolver of resolvers) {
        const rules = resolver.rulesFor(user, namespace);
        resourceRules.push(...rules.resourceRules);
        nonResourceRules.push(...rules.nonResourceRules);
        incomplete ||= rules.incomplete;
        if (rules.evaluationError) errors.push(rules.evaluationError);
      }
      return {
        resourceRules,
        nonResourceRules,
        incomplete,
        ...(errors.length ? { evaluationError: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` } : {}),
      };
    },
  };
}

/** A chain that is also the rule resolver of SelfSubjectRulesReview (`kubectl auth can-i --list`). */
export type AuthorizerChain = Authorizer & RuleResolver & { readonly modes: readonly AuthorizationMode[] };

/**
 * Builds the chain for `--authorization-mode` (an ordered list; also accepts one comma-separated
 * string per entry). Unknown or repeated modes, or an empty list, are a StartupError.
 */
export function buildAuthorizer(modes: readonly string[], rbac: RbacIndex, node?: NodeGraph): AuthorizerChain {
  const names = modes.flatMap((m) => m.split(',')).map((m) => m.trim()).filter((m) => m !== '');
  if (names.length === 0) throw new StartupError('--authorization-mode: at least one authorization mode must be given');
  const seen = new Set<string>();
  const members: (Authorizer & RuleResolver)[] = [];
  for (const name of names) {
    if (!(AuthorizationModes as readonly string[]).includes(name)) {
      throw new StartupError(`--authorization-mode: authorization mode ${JSON.stringify(name)} is not supported (supported: ${AuthorizationModes.join(', ')})`);
    }
    if (seen.has(name)) throw new StartupError(`--authorization-mode: authorization mode ${JSON.stringify(name)} is listed more than once`);
    seen.add(name);
    switch (name as AuthorizationMode) {
      case 'AlwaysAllow':
        members.push(alwaysAllow);
        break;
      case 'AlwaysDeny':
        members.push(alwaysDeny);
        break;
      case 'RBAC':
        members.push(rbac);
        break;
      case 'Node':
        if (!node) throw new StartupError('--authorization-mode: the Node mode needs the node graph (a NodeGraph fed with Pod events)');
        members.push(new NodeAuthorizer(node));
        break;
    }
  }
  const chain = unionAuthorizer([privilegedGroups(SystemPrivilegedGroup), ...members]);
  const resolver = unionRuleResolver(members);
  return {
    modes: names as AuthorizationMode[],
    authorize: (attributes) => chain.authorize(attributes),
    rulesFor: (user, namespace) => resolver.rulesFor(user, namespace),
  };
}

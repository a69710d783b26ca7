/** The exact 403 texts of kube.md §3.6 (upstream responsewriters.forbiddenMessage + apierrors.NewForbidden). */
import { goQuote } from './rules.js';
import { ForbiddenError, type Attributes } from './types.js';

/** `User "jane" cannot list resource "pods" in API group "" in the namespace "default"` and its variants. */
export function baseForbiddenMessage(attributes: Attributes): string {
  const user = goQuote(attributes.user.name);
  if (!attributes.resourceRequest) return `User ${user} cannot ${attributes.verb} path ${goQuote(attributes.path)}`;
  const resource = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
  const scope = attributes.namespace ? `in the namespace ${goQuote(attributes.namespace)}` : 'at the cluster scope';
  return `User ${user} cannot ${attributes.verb} resource ${goQuote(resource)} in API group ${goQuote(attributes.apiGroup)} ${scope}`;
}

/** `<resource>[.<group>] ["<name>"] is forbidden: <base>[: <reason>]`, or `forbidden: <base>` without a resource. */
export function forbiddenMessage(attributes: Attributes, reason: string): string {
  const detail = reason ? `${baseForbiddenMessage(attributes)}: ${reason}` : baseForbiddenMessage(attributes);
  return wrapForbidden(attributes.apiGroup, attributes.resource, attributes.name, detail);
}

/** apierrors.NewForbidden's message for a group/resource, name and cause. */
export function wrapForbidden(group: string, resource: string, name: string, detail: string): string {
  if (group === '' && resource === '') return `forbidden: ${detail}`;
  const qualified = group ? `${resource}.${group}` : resource;
  return name ? `${qualified} ${goQuote(name)} is forbidden: ${detail}` : `${qualified} is forbidden: ${detail}`;
}

/** The ForbiddenError M turns into the 403 Status (details.kind = resource, details.group, details.name). */
export function forbiddenError(attributes: Attributes, reason: string): ForbiddenError {
  return new ForbiddenError(forbiddenMessage(attributes, reason), {
    group: attributes.apiGroup,
    resource: attributes.resource,
    name: attributes.name,
  });
}

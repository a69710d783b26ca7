/**
 * The review kinds of `authorization.k8s.io` and `authentication.k8s.io`: create-only, never
 * stored. A POST is answered by the access-control functions (authz/, authn/) through the
 * server's review handlers; these entries give discovery, OpenAPI and request decoding what they need.
 */
import { list, map, obj } from '../api/schema.js';
import { CREATE_ONLY, type ResourceType, type Virtual } from './types.js';

const resourceAttributes = obj({
  namespace: 'string', verb: 'string', group: 'string', version: 'string', resource: 'string', subresource: 'string', name: 'string',
  fieldSelector: 'any', labelSelector: 'any',
});
const nonResourceAttributes = obj({ path: 'string', verb: 'string' });
const sarSpec = obj({ resourceAttributes, nonResourceAttributes, user: 'string', groups: list('string'), group: list('string'), extra: map(list('string')), uid: 'string' });

function review(group: string, versions: string[], resource: string, kind: string, namespaced: boolean, virtual: Virtual, schema = obj({ spec: 'any', status: 'any' })): ResourceType {
  return {
    group, versions, storageVersion: versions[0]!, resource, singular: resource.replace(/s$/, ''), kind, listKind: `${kind}List`,
    namespaced, verbs: CREATE_ONLY, virtual, schema,
  };
}

export const reviewResources: readonly ResourceType[] = [
  review('authorization.k8s.io', ['v1'], 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', false, 'selfsubjectaccessreviews', obj({ spec: obj({ resourceAttributes, nonResourceAttributes }), status: 'any' })),
  review('authorization.k8s.io', ['v1'], 'subjectaccessreviews', 'SubjectAccessReview', false, 'subjectaccessreviews', obj({ spec: sarSpec, status: 'any' })),
  review('authorization.k8s.io', ['v1'], 'localsubjectaccessreviews', 'LocalSubjectAccessReview', true, 'localsubjectaccessreviews', obj({ spec: sarSpec, status: 'any' })),
  review('authorization.k8s.io', ['v1'], 'selfsubjectrulesreviews', 'SelfSubjectRulesReview', false, 'selfsubjectrulesreviews', obj({ spec: obj({ namespace: 'string' }), status: 'any' })),
  review('authentication.k8s.io', ['v1', 'v1beta1'], 'tokenreviews', 'TokenReview', false, 'tokenreviews', obj({ spec: obj({ token: 'string', audiences: list('string') }), status: 'any' })),
  review('authentication.k8s.io', ['v1', 'v1beta1'], 'selfsubjectreviews', 'SelfSubjectReview', false, 'selfsubjectreviews', obj({ status: 'any' })),
];

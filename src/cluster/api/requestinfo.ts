/**
 * URL + method → what the request is about (upstream RequestInfo, kube.md §3.1). Authorization
 * attributes and routing both come from this one parse.
 *
 *   /api/v1/namespaces                               list namespaces (cluster scope)
 *   /api/v1/namespaces/{ns}                          the namespace {ns} (resource namespaces, name ns)
 *   /api/v1/namespaces/{ns}/pods/{name}/status       subresource status of pod name in ns
 *   /apis/{group}/{version}/{resource}[/{name}[/{sub}]]
 *   /api/v1/watch/namespaces/{ns}/pods               legacy watch path (verb watch)
 *   anything else (/version, /healthz, /apis, /apis/{g}, /apis/{g}/{v}, /openapi/v2) is non-resource.
 */
import { singleNameFromFieldSelector } from '../registry/selectors.js';

export interface RequestInfo {
  readonly resourceRequest: boolean;
  readonly path: string;
  readonly verb: string;
  readonly apiPrefix: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  /** The legacy `/watch/` path form was used. */
  readonly legacyWatch: boolean;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

const METHOD_VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete', GET: 'get', HEAD: 'get' };

export function requestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const nonResource: RequestInfo = {
    resourceRequest: false, path, verb: method.toLowerCase(), apiPrefix: '', apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '', legacyWatch: false,
  };
  const parts = path.replace(/^\/+/, '').replace(/\/+$/, '').split('/').map(safeDecode);
  if (parts.length < 3 || (parts[0] !== 'api' && parts[0] !== 'apis')) return nonResource;
  let rest = parts.slice(1);
  const apiPrefix = parts[0]!;
  let apiGroup = '';
  if (apiPrefix === 'apis') {
    if (rest.length < 3) return nonResource;
    apiGroup = rest[0]!;
    rest = rest.slice(1);
  }
  const apiVersion = rest[0]!;
  rest = rest.slice(1);
  let verb = METHOD_VERBS[method] ?? method.toLowerCase();
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    verb = 'watch';
    rest = rest.slice(1);
  }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1]!;
    // `/namespaces/{ns}`, `/namespaces/{ns}/status|finalize`: the Namespace object itself.
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  }
  const resource = rest[0] ?? '';
  let name = rest[1] ?? '';
  const subresource = rest[2] ?? '';
  if (!legacyWatch && (method === 'GET' || method === 'HEAD') && name === '') {
    const watch = query.get('watch');
    verb = watch !== null && watch !== 'false' && watch !== '0' ? 'watch' : 'list';
  }
  if (method === 'DELETE' && name === '') verb = 'deletecollection';
  if ((verb === 'list' || verb === 'watch') && name === '') {
    const single = singleNameFromFieldSelector(query.get('fieldSelector') ?? undefined);
    if (single !== undefined) name = single;
  }
  return { resourceRequest: true, path, verb, apiPrefix, apiGroup, apiVersion, namespace, resource, subresource, name, legacyWatch };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

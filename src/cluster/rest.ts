/**
 * Resource requests (`/api/v1/...`, `/apis/<g>/<v>/...`) after authentication and authorization:
 * decode the body, call the registry for the verb, and encode the answer (object, list, Table,
 * watch stream, Status). Review kinds and the service-account `token` subresource are answered by
 * the access-control functions of authn/ and authz/.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { FastifyReply } from '../common/http.js';
import type { Watcher } from '../storage/types.js';
import { decodeObject, decodePatch, fieldValidationOf, patchTypeOf, validateFields } from './api/codec.js';
import type { RequestInfo } from './api/requestinfo.js';
import { toTable, wantsTable } from './api/table.js';
import type { Authenticator, ServiceAccountTokenIssuer, UserInfo } from './authn/index.js';
import { reviewLocalSubjectAccess, reviewSelfSubjectAccess, reviewSelfSubjectRules, reviewSubjectAccess, reviewToken, selfSubjectReview, type AuthorizerChain, type RbacIndex } from './authz/index.js';
import { badRequest, field, invalid, methodNotSupported, pathNotFound, StatusError } from './errors.js';
import { isPlainObject, now, type JsonObject, type KubeObject } from './object.js';
import type { Registry, WriteContext } from './registry/registry.js';
import { selectorPredicate, type Predicate } from './registry/selectors.js';
import type { StoreWatchEvent } from './registry/store.js';
import { apiVersionOf, parseApiVersion, type ResourceType, type Verb } from './resources/types.js';

export interface ApiRequest {
  readonly info: RequestInfo;
  readonly query: URLSearchParams;
  readonly user: UserInfo;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer | undefined;
  readonly raw: IncomingMessage;
  readonly reply: FastifyReply;
}

export interface AccessControl {
  readonly authenticator: Authenticator;
  readonly authorizer: AuthorizerChain;
  readonly rbac: RbacIndex;
  readonly tokenIssuer: ServiceAccountTokenIssuer;
}

/** How long a watch without `timeoutSeconds` stays open. */
const DEFAULT_WATCH_SECONDS = 30 * 60;
/** How often a watch that asked for bookmarks gets one. */
const BOOKMARK_INTERVAL_MS = 10_000;

export class ResourceHandlers {
  private readonly watches = new Set<() => void>();

  constructor(
    private readonly registry: Registry,
    private readonly access: AccessControl,
  ) {}

  /** End every open watch stream (server shutdown). */
  closeWatches(): void {
    for (const close of [...this.watches]) close();
  }

  async handle(request: ApiRequest): Promise<unknown> {
    const { info } = request;
    const type = this.registry.resources.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!type) throw pathNotFound();
    if (info.subresource) return this.subresource(request, type);
    const verb = info.verb as Verb;
    if (!type.verbs.includes(verb)) throw methodNotSupported(type, verb);
    if (type.namespaced && info.namespace === '' && !['list', 'watch'].includes(verb) && type.resource !== 'namespaces') {
      throw pathNotFound();
    }
    if (!type.namespaced && info.namespace !== '' && type.resource !== 'namespaces') throw pathNotFound();
    const name = this.urlName(request);
    if (name === '' && (verb === 'update' || verb === 'patch')) throw methodNotSupported(type, verb);
    if (verb === 'create' && info.name !== '') throw methodNotSupported(type, verb);
    const namespace = type.namespaced ? info.namespace : '';
    switch (verb) {
      case 'get':
        return this.respondObject(request, type, await this.registry.get(type, namespace, name, info.apiVersion));
      case 'list':
        return this.list(request, type, namespace);
      case 'watch':
        return this.watch(request, type, namespace);
      case 'create':
        if (type.virtual) return this.review(request, type);
        return this.create(request, type, namespace);
      case 'update':
        return this.update(request, type, namespace, name);
      case 'patch':
        return this.patch(request, type, namespace, name);
      case 'delete':
        return this.delete(request, type, namespace, name);
      case 'deletecollection':
        return this.deleteCollection(request, type, namespace);
    }
  }

  /** The object name from the URL (RequestInfo's name may come from a `metadata.name=` field selector). */
  private urlName(request: ApiRequest): string {
    const { info } = request;
    return ['list', 'watch', 'create', 'deletecollection'].includes(info.verb) ? '' : info.name;
  }

  private writeContext(request: ApiRequest, subresource?: string): WriteContext {
    const dryRun = request.query.getAll('dryRun');
    for (const value of dryRun) if (value !== 'All') throw badRequest(`dryRun: Unsupported value: "${value}": supported values: "All"`);
    return {
      user: request.user,
      version: request.info.apiVersion,
      dryRun: dryRun.length > 0,
      fieldManager: fieldManagerOf(request),
      ...(subresource ? { subresource } : {}),
      warn: (text) => addWarnings(request, [text]),
    };
  }

  /** Decode a write body and check it names the URL's kind (G11: a missing apiVersion/kind defaults from the URL). */
  private decodeBody(request: ApiRequest, type: ResourceType): { object: KubeObject; warnings: string[] } {
    const object = decodeObject(request.body, request.headers['content-type']);
    const expected = apiVersionOf(type.group, request.info.apiVersion);
    if (object.kind !== undefined && object.kind !== '' && object.kind !== type.kind) {
      throw badRequest(`the kind in the request body (${String(object.kind)}) does not match the kind of the URL (${type.kind})`);
    }
    if (object.apiVersion !== undefined && object.apiVersion !== '') {
      const { group, version } = parseApiVersion(String(object.apiVersion));
      if (group !== type.group || !type.versions.includes(version)) {
        throw badRequest(`the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${expected})`);
      }
    }
    const warnings = validateFields(object, type, fieldValidationOf(request.query));
    if (object.metadata === undefined || object.metadata === null) object.metadata = {};
    const namespace = (object.metadata as JsonObject).namespace;
    if (type.namespaced && namespace !== undefined && namespace !== '' && namespace !== request.info.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    return { object: object as KubeObject, warnings };
  }

  private async create(request: ApiRequest, type: ResourceType, namespace: string): Promise<unknown> {
    const { object, warnings } = this.decodeBody(request, type);
    const created = await this.registry.create(type, namespace, object, this.writeContext(request));
    return this.respondObject(request, type, created, 201, warnings);
  }

  private async update(request: ApiRequest, type: ResourceType, namespace: string, name: string, subresource?: string): Promise<unknown> {
    const { object, warnings } = this.decodeBody(request, type);
    const updated = await this.registry.update(type, namespace, name, object, this.writeContext(request, subresource));
    return this.respondObject(request, type, updated, 200, warnings);
  }

  private async patch(request: ApiRequest, type: ResourceType, namespace: string, name: string, subresource?: string): Promise<unknown> {
    const patchType = patchTypeOf(request.headers['content-type']);
    const patch = decodePatch(request.body, patchType);
    const mode = fieldValidationOf(request.query);
    let warnings: string[] = [];
    if (patchType === 'apply') {
      if (!request.query.get('fieldManager')) throw badRequest('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
      const config = patch as KubeObject;
      if (!config.apiVersion || !config.kind) throw badRequest('invalid object type: /, Kind=');
      if (config.kind !== type.kind) throw badRequest(`the kind in the request body (${String(config.kind)}) does not match the kind of the URL (${type.kind})`);
      if (isPlainObject(config.metadata) && config.metadata.name !== undefined && config.metadata.name !== name) {
        throw badRequest(`the name of the object (${String(config.metadata.name)}) does not match the name on the URL (${name})`);
      }
      warnings = validateFields(config as JsonObject, type, mode);
      if (!isPlainObject(config.metadata)) config.metadata = {};
      if (type.namespaced) config.metadata.namespace = namespace;
    }
    const force = ['true', '1'].includes(request.query.get('force') ?? '');
    const check = patchType === 'apply' ? undefined : (patched: KubeObject) => (warnings = validateFields(patched as JsonObject, type, mode));
    const { object, created } = await this.registry.patch(type, namespace, name, patchType, patch, { ...this.writeContext(request, subresource), force, ...(check ? { check } : {}) });
    return this.respondObject(request, type, object, created ? 201 : 200, warnings);
  }

  private async delete(request: ApiRequest, type: ResourceType, namespace: string, name: string): Promise<unknown> {
    const options = request.body && request.body.length ? decodeObject(request.body, request.headers['content-type']) : {};
    const preconditions = (isPlainObject(options.preconditions) ? options.preconditions : {}) as { uid?: string; resourceVersion?: string };
    const deleted = await this.registry.delete(type, namespace, name, this.writeContext(request), preconditions);
    if (type.resource === 'pods' || type.resource === 'namespaces') return this.respondObject(request, type, deleted);
    return this.send(request, 200, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name, ...(type.group ? { group: type.group } : {}), kind: type.resource, uid: deleted.metadata.uid },
    });
  }

  private async deleteCollection(request: ApiRequest, type: ResourceType, namespace: string): Promise<unknown> {
    const predicate = this.predicate(request, type);
    const page = await this.registry.store(type).list(namespace, predicate ? { predicate } : {});
    const context = this.writeContext(request);
    const deleted: KubeObject[] = [];
    for (const item of page.items) {
      try {
        deleted.push(await this.registry.delete(type, item.metadata.namespace ?? '', item.metadata.name!, context));
      } catch (error) {
        if (!(error instanceof StatusError && error.code === 404)) throw error;
      }
    }
    return this.send(request, 200, { kind: type.listKind, apiVersion: apiVersionOf(type.group, request.info.apiVersion), metadata: { resourceVersion: page.resourceVersion }, items: deleted.map(({ apiVersion: _v, kind: _k, ...rest }) => rest) });
  }

  private predicate(request: ApiRequest, type: ResourceType): Predicate | undefined {
    return selectorPredicate(type, request.query.get('labelSelector') ?? undefined, request.query.get('fieldSelector') ?? undefined);
  }

  private async list(request: ApiRequest, type: ResourceType, namespace: string): Promise<unknown> {
    const predicate = this.predicate(request, type);
    const limitText = request.query.get('limit');
    const limit = limitText ? Number(limitText) : undefined;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) throw badRequest(`limit: Invalid value: ${JSON.stringify(limitText)}: must be a non-negative integer`);
    // resourceVersionMatch=Exact reads the list as of that revision; otherwise the list is current
    // (which satisfies NotOlderThan and the "any" of resourceVersion=0).
    const rv = request.query.get('resourceVersion') ?? '';
    if (rv !== '' && !/^\d+$/.test(rv)) throw badRequest(`resourceVersion: Invalid value: ${JSON.stringify(rv)}: must be a non-negative integer`);
    const match = request.query.get('resourceVersionMatch') ?? '';
    if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') throw badRequest(`resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`);
    const exact = match === 'Exact' && rv !== '' && rv !== '0' ? { resourceVersion: Number(rv) } : {};
    const page = await this.registry.list(type, namespace, request.info.apiVersion, { ...(predicate ? { predicate } : {}), ...(limit ? { limit } : {}), ...(request.query.get('continue') ? { continue: request.query.get('continue')! } : {}), ...exact });
    const metadata = { resourceVersion: page.resourceVersion, ...(page.continue ? { continue: page.continue } : {}), ...(page.remainingItemCount !== undefined ? { remainingItemCount: page.remainingItemCount } : {}) };
    const apiVersion = apiVersionOf(type.group, request.info.apiVersion);
    if (wantsTable(request.headers.accept)) return this.send(request, 200, toTable(type, page.items, metadata, request.query.get('includeObject'), apiVersion));
    return this.send(request, 200, { kind: type.listKind, apiVersion, metadata, items: page.items });
  }

  private respondObject(request: ApiRequest, type: ResourceType, object: KubeObject, code = 200, warnings: string[] = []): unknown {
    addWarnings(request, warnings);
    if (wantsTable(request.headers.accept)) {
      return this.send(request, code, toTable(type, [object], { resourceVersion: object.metadata.resourceVersion }, request.query.get('includeObject'), String(object.apiVersion)));
    }
    return this.send(request, code, object);
  }

  private send(request: ApiRequest, code: number, body: unknown): unknown {
    return request.reply.code(code).header('content-type', 'application/json').send(Buffer.from(JSON.stringify(body)));
  }

  // ---- subresources ----

  private async subresource(request: ApiRequest, type: ResourceType): Promise<unknown> {
    const { info } = request;
    const sub = type.subresources?.find((s) => s.name === info.subresource);
    if (!sub) throw pathNotFound();
    const verb = info.verb as Verb;
    if (!sub.verbs.includes(verb)) throw methodNotSupported({ group: type.group, resource: `${type.resource}/${sub.name}` }, verb);
    const namespace = type.namespaced ? info.namespace : '';
    if (type.resource === 'serviceaccounts' && sub.name === 'token') return this.tokenRequest(request, namespace, info.name);
    if (sub.name === 'status' || sub.name === 'finalize') {
      const subresource = sub.name === 'status' ? 'status' : undefined;
      if (verb === 'get') return this.respondObject(request, type, await this.registry.get(type, namespace, info.name, info.apiVersion));
      if (verb === 'update') return this.update(request, type, namespace, info.name, subresource);
      if (verb === 'patch') return this.patch(request, type, namespace, info.name, subresource);
    }
    throw methodNotSupported(type, verb);
  }

  /** `POST .../serviceaccounts/{name}/token` (TokenRequest, kube.md §2.3). */
  private async tokenRequest(request: ApiRequest, namespace: string, name: string): Promise<unknown> {
    const body = decodeObject(request.body, request.headers['content-type']);
    const spec = (isPlainObject(body.spec) ? body.spec : {}) as JsonObject;
    const expirationSeconds = spec.expirationSeconds === undefined || spec.expirationSeconds === null ? 3600 : Number(spec.expirationSeconds);
    const gk = { group: 'authentication.k8s.io', kind: 'TokenRequest' };
    if (!Number.isInteger(expirationSeconds)) throw badRequest('spec.expirationSeconds: must be an integer');
    if (expirationSeconds < 600) throw invalid(gk, '', [field.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration less than 10 minutes')]);
    if (expirationSeconds > 2 ** 32) throw invalid(gk, '', [field.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration larger than 2^32 seconds')]);
    const audiences = Array.isArray(spec.audiences) ? spec.audiences.filter((a): a is string => typeof a === 'string') : [];
    const saType = this.registry.resources.lookup('', 'v1', 'serviceaccounts')!;
    const sa = await this.registry.store(saType).get(namespace, name);
    let boundObject: { kind: 'Pod' | 'Secret' | 'Node'; name: string; uid: string } | undefined;
    const ref = spec.boundObjectRef;
    if (isPlainObject(ref)) {
      const kind = String(ref.kind ?? '') as 'Pod' | 'Secret' | 'Node';
      const resource = ({ Pod: 'pods', Secret: 'secrets', Node: 'nodes' } as Record<string, string>)[kind];
      if (!resource) throw invalid(gk, '', [field.notSupported('spec.boundObjectRef.kind', kind, ['Pod', 'Secret', 'Node'])]);
      const boundType = this.registry.resources.lookup('', 'v1', resource)!;
      const target = await this.registry.store(boundType).get(boundType.namespaced ? namespace : '', String(ref.name ?? ''));
      if (ref.uid && ref.uid !== target.metadata.uid) throw new StatusError(409, 'Conflict', `the UID in the bound object reference (${String(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`);
      boundObject = { kind, name: target.metadata.name!, uid: target.metadata.uid! };
    }
    const issued = await this.access.tokenIssuer.issue(
      { namespace, name, uid: sa.metadata.uid! },
      { audiences, expirationSeconds, ...(boundObject ? { boundObject } : {}) },
    );
    return this.send(request, 201, {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace, creationTimestamp: now() },
      spec: { audiences: audiences.length ? audiences : [...this.access.tokenIssuer.apiAudiences], expirationSeconds, boundObjectRef: boundObject ? { ...boundObject, apiVersion: 'v1' } : null },
      status: issued,
    });
  }

  // ---- reviews ----

  private async review(request: ApiRequest, type: ResourceType): Promise<unknown> {
    const body = decodeObject(request.body, request.headers['content-type']);
    body.apiVersion ||= apiVersionOf(type.group, request.info.apiVersion);
    body.kind ||= type.kind;
    const { authorizer } = this.access;
    let response: object;
    switch (type.virtual) {
      case 'selfsubjectaccessreviews':
        response = reviewSelfSubjectAccess(request.user, body, authorizer);
        break;
      case 'subjectaccessreviews':
        response = reviewSubjectAccess(body, authorizer);
        break;
      case 'localsubjectaccessreviews':
        response = reviewLocalSubjectAccess(request.info.namespace, body, authorizer);
        break;
      case 'selfsubjectrulesreviews':
        response = reviewSelfSubjectRules(request.user, body, authorizer);
        break;
      case 'tokenreviews':
        response = await reviewToken(body, this.access.authenticator);
        break;
      case 'selfsubjectreviews':
        response = selfSubjectReview(request.user, apiVersionOf(type.group, request.info.apiVersion));
        break;
      default:
        throw pathNotFound();
    }
    return this.send(request, 201, response);
  }

  // ---- watch ----

  private async watch(request: ApiRequest, type: ResourceType, namespace: string): Promise<unknown> {
    const predicate = this.predicate(request, type);
    const rvText = request.query.get('resourceVersion') ?? '';
    if (rvText !== '' && !/^\d+$/.test(rvText)) throw badRequest(`resourceVersion: Invalid value: ${JSON.stringify(rvText)}: must be a non-negative integer`);
    const timeoutText = request.query.get('timeoutSeconds');
    const timeoutSeconds = timeoutText && /^\d+$/.test(timeoutText) ? Number(timeoutText) : DEFAULT_WATCH_SECONDS;
    const bookmarks = request.query.get('allowWatchBookmarks') === 'true';
    const sendInitial = request.query.get('sendInitialEvents') === 'true' || rvText === '' || rvText === '0';
    const table = wantsTable(request.headers.accept);
    const apiVersion = apiVersionOf(type.group, request.info.apiVersion);
    const store = this.registry.store(type);

    let from: number;
    let initial: KubeObject[] = [];
    if (sendInitial) {
      const page = await store.list(namespace, predicate ? { predicate } : {});
      initial = page.items;
      from = Number(page.resourceVersion);
    } else {
      from = Number(rvText);
    }

    const reply = request.reply;
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private', 'transfer-encoding': 'chunked' });
    // Clients (client-node's fetch) wait for the response head before they consider the watch open.
    res.flushHeaders();
    let lastRevision = from;
    let first = true;
    const present = (object: KubeObject): unknown => {
      const visible = { ...object, apiVersion, kind: type.kind };
      if (!table) return visible;
      const t = toTable(type, [visible], { resourceVersion: object.metadata.resourceVersion }, request.query.get('includeObject'), apiVersion) as JsonObject;
      if (!first) t.columnDefinitions = [];
      first = false;
      return t;
    };
    const write = (eventType: string, object: unknown) => {
      if (!res.writableEnded) res.write(`${JSON.stringify({ type: eventType, object })}\n`);
    };
    let watcher: Watcher | undefined;
    let timer: NodeJS.Timeout | undefined;
    let bookmarkTimer: NodeJS.Timeout | undefined;
    const close = () => {
      this.watches.delete(close);
      watcher?.close();
      clearTimeout(timer);
      clearInterval(bookmarkTimer);
      if (!res.writableEnded) res.end();
    };
    this.watches.add(close);
    // The response closes when the client goes away (or we end it).
    res.on('close', close);
    timer = setTimeout(close, timeoutSeconds * 1000);
    const bookmark = (annotations?: Record<string, string>) =>
      write('BOOKMARK', { kind: type.kind, apiVersion, metadata: { resourceVersion: String(lastRevision), ...(annotations ? { annotations } : {}) } });

    for (const object of initial) write('ADDED', present(object));
    if (bookmarks && request.query.get('sendInitialEvents') === 'true') bookmark({ 'k8s.io/initial-events-end': 'true' });
    try {
      watcher = await store.watch(
        namespace,
        from,
        (events: StoreWatchEvent[]) => {
          for (const event of events) {
            lastRevision = Number(event.object.metadata.resourceVersion);
            const matches = !predicate || predicate(event.object);
            const matched = event.previous ? !predicate || predicate(event.previous) : false;
            // A change that moves an object into or out of the selection is an ADDED or DELETED for this watch.
            if (event.type === 'MODIFIED' && predicate) {
              if (matches && matched) write('MODIFIED', present(event.object));
              else if (matches) write('ADDED', present(event.object));
              else if (matched) write('DELETED', present(event.object));
            } else if (matches) {
              write(event.type, present(event.object));
            }
          }
        },
        (error) => {
          write('ERROR', error.status);
          close();
        },
      );
    } catch (error) {
      write('ERROR', (error instanceof StatusError ? error : new StatusError(500, 'InternalError', String(error))).status);
      close();
      return;
    }
    if (res.writableEnded) watcher.close();
    if (bookmarks) bookmarkTimer = setInterval(() => bookmark(), BOOKMARK_INTERVAL_MS);
    return undefined;
  }
}

/** `fieldManager`, or upstream's default: the client's User-Agent up to the first `/`. */
function fieldManagerOf(request: ApiRequest): string {
  const explicit = request.query.get('fieldManager');
  if (explicit) {
    if (explicit.length > 128) throw badRequest('fieldManager: Too long: may not be more than 128 bytes');
    return explicit;
  }
  const agent = String(request.headers['user-agent'] ?? 'unknown');
  return agent.split('/')[0] || 'unknown';
}

/**
 * Add `Warning: 299 - "<text>"` entries (kubectl prints each as `Warning: <text>`). Appended, not
 * replaced: admission webhooks warn while the request runs, field validation when it answers, and
 * warnings go out with errors too.
 */
function addWarnings(request: ApiRequest, warnings: readonly string[]): void {
  if (warnings.length === 0) return;
  const added = warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', ');
  const previous = request.reply.getHeader('warning');
  request.reply.header('warning', previous ? `${String(previous)}, ${added}` : added);
}

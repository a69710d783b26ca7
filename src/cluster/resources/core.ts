/** The core group (`/api/v1`) kinds this server stores. */
import { field, type FieldError } from '../errors.js';
import { isPlainObject, type JsonObject, type KubeObject } from '../object.js';
import { list, map, obj, type Schema } from '../api/schema.js';
import { AGE, count } from './columns.js';
import { READ_WRITE, type ResourceType } from './types.js';

const core = { group: '', versions: ['v1'], storageVersion: 'v1' } as const;

const envVar = obj({ name: 'string', value: 'string', valueFrom: 'any' });
const containerPort = obj({ containerPort: 'integer', hostIP: 'string', hostPort: 'integer', name: 'string', protocol: 'string' });
const volumeMount = obj({ mountPath: 'string', mountPropagation: 'string', name: 'string', readOnly: 'boolean', recursiveReadOnly: 'string', subPath: 'string', subPathExpr: 'string' });
const container = obj({
  args: list('string'),
  command: list('string'),
  env: list(envVar),
  envFrom: list('any'),
  image: 'string',
  imagePullPolicy: 'string',
  lifecycle: 'any',
  livenessProbe: 'any',
  name: 'string',
  ports: list(containerPort),
  readinessProbe: 'any',
  resizePolicy: list('any'),
  resources: 'any',
  restartPolicy: 'string',
  securityContext: 'any',
  startupProbe: 'any',
  stdin: 'boolean',
  stdinOnce: 'boolean',
  targetContainerName: 'string',
  terminationMessagePath: 'string',
  terminationMessagePolicy: 'string',
  tty: 'boolean',
  volumeDevices: list('any'),
  volumeMounts: list(volumeMount),
  workingDir: 'string',
});

const podSpec = obj({
  activeDeadlineSeconds: 'integer',
  affinity: 'any',
  automountServiceAccountToken: 'boolean',
  containers: list(container),
  dnsConfig: 'any',
  dnsPolicy: 'string',
  enableServiceLinks: 'boolean',
  ephemeralContainers: list(container),
  hostAliases: list('any'),
  hostIPC: 'boolean',
  hostNetwork: 'boolean',
  hostPID: 'boolean',
  hostUsers: 'boolean',
  hostname: 'string',
  imagePullSecrets: list(obj({ name: 'string' })),
  initContainers: list(container),
  nodeName: 'string',
  nodeSelector: map('string'),
  os: 'any',
  overhead: 'any',
  preemptionPolicy: 'string',
  priority: 'integer',
  priorityClassName: 'string',
  readinessGates: list('any'),
  resourceClaims: list('any'),
  resources: 'any',
  restartPolicy: 'string',
  runtimeClassName: 'string',
  schedulerName: 'string',
  schedulingGates: list('any'),
  securityContext: 'any',
  serviceAccount: 'string',
  serviceAccountName: 'string',
  setHostnameAsFQDN: 'boolean',
  shareProcessNamespace: 'boolean',
  subdomain: 'string',
  terminationGracePeriodSeconds: 'integer',
  tolerations: list('any'),
  topologySpreadConstraints: list('any'),
  volumes: list('any'),
});

const PODS: ResourceType = {
  ...core,
  resource: 'pods',
  singular: 'pod',
  kind: 'Pod',
  listKind: 'PodList',
  namespaced: true,
  verbs: READ_WRITE,
  shortNames: ['po'],
  categories: ['all'],
  subresources: [{ name: 'status', kind: 'Pod', verbs: ['get', 'patch', 'update'] }],
  nameRule: 'dns1123-subdomain',
  statusField: 'status',
  schema: obj({ spec: podSpec, status: 'any' }),
  defaults(pod) {
    const spec = (pod.spec ??= {}) as JsonObject;
    spec.restartPolicy ??= 'Always';
    spec.terminationGracePeriodSeconds ??= 30;
    spec.dnsPolicy ??= 'ClusterFirst';
    spec.securityContext ??= {};
    spec.schedulerName ??= 'default-scheduler';
    spec.enableServiceLinks ??= true;
    spec.preemptionPolicy ??= 'PreemptLowerPriority';
    spec.priority ??= 0;
    spec.serviceAccountName ??= (spec.serviceAccount as string | undefined) ?? 'default';
    spec.serviceAccount ??= spec.serviceAccountName;
    for (const key of ['containers', 'initContainers'] as const) {
      if (!Array.isArray(spec[key])) continue;
      for (const c of spec[key] as JsonObject[]) {
        if (!isPlainObject(c)) continue;
        c.terminationMessagePath ??= '/dev/termination-log';
        c.terminationMessagePolicy ??= 'File';
        c.resources ??= {};
        if (typeof c.image === 'string') c.imagePullPolicy ??= /:[^/]+$/.test(c.image) && !c.image.endsWith(':latest') ? 'IfNotPresent' : 'Always';
        for (const p of (Array.isArray(c.ports) ? c.ports : []) as JsonObject[]) if (isPlainObject(p)) p.protocol ??= 'TCP';
      }
    }
    pod.status ??= { phase: 'Pending', qosClass: 'BestEffort' };
  },
  validate(pod) {
    const errors: FieldError[] = [];
    const spec = pod.spec as JsonObject | undefined;
    const containers = spec?.containers;
    if (!Array.isArray(containers) || containers.length === 0) {
      errors.push(field.required('spec.containers'));
      return errors;
    }
    const seen = new Set<string>();
    containers.forEach((c, i) => {
      const name = (c as JsonObject).name;
      if (typeof name !== 'string' || name === '') errors.push(field.required(`spec.containers[${i}].name`));
      else if (seen.has(name)) errors.push(field.duplicate(`spec.containers[${i}].name`, name));
      else seen.add(name);
      if (typeof (c as JsonObject).image !== 'string' || (c as JsonObject).image === '') errors.push(field.required(`spec.containers[${i}].image`));
    });
    return errors;
  },
  selectableFields: {
    'spec.nodeName': (p) => String((p.spec as JsonObject | undefined)?.nodeName ?? ''),
    'spec.restartPolicy': (p) => String((p.spec as JsonObject | undefined)?.restartPolicy ?? ''),
    'spec.schedulerName': (p) => String((p.spec as JsonObject | undefined)?.schedulerName ?? ''),
    'spec.serviceAccountName': (p) => String((p.spec as JsonObject | undefined)?.serviceAccountName ?? ''),
    'status.phase': (p) => String((p.status as JsonObject | undefined)?.phase ?? ''),
    'status.podIP': (p) => String((p.status as JsonObject | undefined)?.podIP ?? ''),
    'status.nominatedNodeName': (p) => String((p.status as JsonObject | undefined)?.nominatedNodeName ?? ''),
  },
  mergeKeys: {
    'spec.containers': 'name',
    'spec.initContainers': 'name',
    'spec.ephemeralContainers': 'name',
    'spec.containers[].env': 'name',
    'spec.initContainers[].env': 'name',
    'spec.containers[].ports': 'containerPort',
    'spec.initContainers[].ports': 'containerPort',
    'spec.containers[].volumeMounts': 'mountPath',
    'spec.initContainers[].volumeMounts': 'mountPath',
    'spec.volumes': 'name',
    'spec.imagePullSecrets': 'name',
    'spec.tolerations': '',
  },
  columns: [
    { name: 'Ready', type: 'string', description: 'The aggregate readiness state of this pod for accepting traffic.', priority: 0, cell: podReady },
    { name: 'Status', type: 'string', description: 'The aggregate status of the containers in this pod.', priority: 0, cell: (p) => String((p.status as JsonObject | undefined)?.phase ?? 'Pending') },
    { name: 'Restarts', type: 'string', description: 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.', priority: 0, cell: () => '0' },
    AGE,
    { name: 'IP', type: 'string', description: 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', priority: 1, cell: (p) => String((p.status as JsonObject | undefined)?.podIP ?? '<none>') },
    { name: 'Node', type: 'string', description: 'NodeName is a request to schedule this pod onto a specific node.', priority: 1, cell: (p) => String((p.spec as JsonObject | undefined)?.nodeName ?? '<none>') },
    { name: 'Nominated Node', type: 'string', description: 'nominatedNodeName is set only when this pod preempts other pods on the node.', priority: 1, cell: () => '<none>' },
    { name: 'Readiness Gates', type: 'string', description: 'If specified, all readiness gates will be evaluated for pod readiness.', priority: 1, cell: () => '<none>' },
  ],
};

function podReady(pod: KubeObject): string {
  const containers = ((pod.spec as JsonObject | undefined)?.containers ?? []) as unknown[];
  const statuses = ((pod.status as JsonObject | undefined)?.containerStatuses ?? []) as JsonObject[];
  return `${statuses.filter((s) => s.ready === true).length}/${containers.length}`;
}

const NAMESPACES: ResourceType = {
  ...core,
  resource: 'namespaces',
  singular: 'namespace',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  namespaced: false,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  shortNames: ['ns'],
  subresources: [
    { name: 'status', kind: 'Namespace', verbs: ['get', 'patch', 'update'] },
    { name: 'finalize', kind: 'Namespace', verbs: ['update'] },
  ],
  nameRule: 'dns1123-label',
  statusField: 'status',
  schema: obj({ spec: obj({ finalizers: list('string') }), status: 'any' }),
  defaults(ns) {
    ns.spec ??= { finalizers: ['kubernetes'] };
    ns.status = { phase: 'Active' };
    const labels = (ns.metadata.labels ??= {});
    if (ns.metadata.name) labels['kubernetes.io/metadata.name'] = ns.metadata.name;
  },
  selectableFields: { 'status.phase': (n) => String((n.status as JsonObject | undefined)?.phase ?? '') },
  columns: [
    { name: 'Status', type: 'string', description: 'The status of the namespace', priority: 0, cell: (n) => String((n.status as JsonObject | undefined)?.phase ?? '') },
    AGE,
  ],
};

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

function validateDataKeys(object: KubeObject, fields: readonly string[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const f of fields) {
    for (const key of Object.keys((object[f] as JsonObject | undefined) ?? {})) {
      if (!CONFIG_KEY.test(key) || key.length > 253) {
        errors.push(field.invalid(`${f}`, key, "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"));
      }
    }
  }
  return errors;
}

const CONFIGMAPS: ResourceType = {
  ...core,
  resource: 'configmaps',
  singular: 'configmap',
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  namespaced: true,
  verbs: READ_WRITE,
  shortNames: ['cm'],
  nameRule: 'dns1123-subdomain',
  schema: obj({ data: map('string'), binaryData: map('string'), immutable: 'boolean' }),
  validate(cm, old) {
    const errors = validateDataKeys(cm, ['data', 'binaryData']);
    if (old?.immutable === true && JSON.stringify([cm.data, cm.binaryData, cm.immutable]) !== JSON.stringify([old.data, old.binaryData, old.immutable])) {
      errors.push(field.forbidden('data', 'field is immutable when `immutable` is set'));
    }
    return errors;
  },
  columns: [{ name: 'Data', type: 'integer', description: 'Data contains the configuration data.', priority: 0, cell: (c) => count(c.data) + count(c.binaryData) }, AGE],
};

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const SECRETS: ResourceType = {
  ...core,
  resource: 'secrets',
  singular: 'secret',
  kind: 'Secret',
  listKind: 'SecretList',
  namespaced: true,
  encrypted: true,
  verbs: READ_WRITE,
  nameRule: 'dns1123-subdomain',
  schema: obj({ data: map('string'), stringData: map('string'), type: 'string', immutable: 'boolean' }),
  defaults(secret) {
    secret.type ??= 'Opaque';
    if (isPlainObject(secret.stringData)) {
      const data = (secret.data ??= {}) as Record<string, string>;
      for (const [k, v] of Object.entries(secret.stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
      delete secret.stringData;
    }
  },
  validate(secret, old) {
    const errors = validateDataKeys(secret, ['data']);
    for (const [k, v] of Object.entries((secret.data as Record<string, unknown> | undefined) ?? {})) {
      if (typeof v !== 'string' || !BASE64.test(v)) errors.push(field.invalid(`data[${k}]`, '<secret contents redacted>', 'illegal base64 data'));
    }
    if (old && old.type !== secret.type) errors.push(field.invalid('type', secret.type, 'field is immutable'));
    return errors;
  },
  selectableFields: { type: (s) => String(s.type ?? '') },
  columns: [
    { name: 'Type', type: 'string', description: 'Used to facilitate programmatic handling of secret data.', priority: 0, cell: (s) => String(s.type ?? '') },
    { name: 'Data', type: 'integer', description: 'Data contains the secret data.', priority: 0, cell: (s) => count(s.data) },
    AGE,
  ],
};

const SERVICEACCOUNTS: ResourceType = {
  ...core,
  resource: 'serviceaccounts',
  singular: 'serviceaccount',
  kind: 'ServiceAccount',
  listKind: 'ServiceAccountList',
  namespaced: true,
  verbs: READ_WRITE,
  shortNames: ['sa'],
  subresources: [{ name: 'token', kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] }],
  nameRule: 'dns1123-subdomain',
  schema: obj({ secrets: list('any'), imagePullSecrets: list(obj({ name: 'string' })), automountServiceAccountToken: 'boolean' }),
  columns: [{ name: 'Secrets', type: 'integer', description: 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', priority: 0, cell: (s) => count(s.secrets) }, AGE],
};

const SERVICES: ResourceType = {
  ...core,
  resource: 'services',
  singular: 'service',
  kind: 'Service',
  listKind: 'ServiceList',
  namespaced: true,
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  shortNames: ['svc'],
  categories: ['all'],
  subresources: [{ name: 'status', kind: 'Service', verbs: ['get', 'patch', 'update'] }],
  nameRule: 'dns1123-label',
  statusField: 'status',
  schema: obj({
    spec: obj({
      allocateLoadBalancerNodePorts: 'boolean', clusterIP: 'string', clusterIPs: list('string'), externalIPs: list('string'),
      externalName: 'string', externalTrafficPolicy: 'string', healthCheckNodePort: 'integer', internalTrafficPolicy: 'string',
      ipFamilies: list('string'), ipFamilyPolicy: 'string', loadBalancerClass: 'string', loadBalancerIP: 'string',
      loadBalancerSourceRanges: list('string'),
      ports: list(obj({ appProtocol: 'string', name: 'string', nodePort: 'integer', port: 'integer', protocol: 'string', targetPort: 'any' })),
      publishNotReadyAddresses: 'boolean', selector: map('string'), sessionAffinity: 'string', sessionAffinityConfig: 'any',
      trafficDistribution: 'string', type: 'string',
    }),
    status: 'any',
  }),
  defaults(svc) {
    const spec = (svc.spec ??= {}) as JsonObject;
    spec.type ??= 'ClusterIP';
    spec.sessionAffinity ??= 'None';
    if (spec.type === 'ClusterIP') spec.internalTrafficPolicy ??= 'Cluster';
    for (const p of (Array.isArray(spec.ports) ? spec.ports : []) as JsonObject[]) {
      if (!isPlainObject(p)) continue;
      p.protocol ??= 'TCP';
      p.targetPort ??= p.port;
    }
    svc.status ??= { loadBalancer: {} };
  },
  validate(svc) {
    const spec = svc.spec as JsonObject;
    const errors: FieldError[] = [];
    const types = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];
    if (!types.includes(String(spec.type))) errors.push(field.notSupported('spec.type', spec.type, types));
    const ports = (spec.ports ?? []) as JsonObject[];
    if (spec.type !== 'ExternalName' && ports.length === 0) errors.push(field.required('spec.ports'));
    ports.forEach((p, i) => {
      if (!Number.isInteger(p.port) || (p.port as number) < 1 || (p.port as number) > 65535) {
        errors.push(field.invalid(`spec.ports[${i}].port`, p.port ?? 0, 'must be between 1 and 65535, inclusive'));
      }
    });
    return errors;
  },
  mergeKeys: { 'spec.ports': 'port' },
  columns: [
    { name: 'Type', type: 'string', description: 'type determines how the Service is exposed.', priority: 0, cell: (s) => String((s.spec as JsonObject).type ?? '') },
    { name: 'Cluster-IP', type: 'string', description: 'clusterIP is the IP address of the service.', priority: 0, cell: (s) => String((s.spec as JsonObject).clusterIP ?? '<none>') },
    { name: 'External-IP', type: 'string', description: 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.', priority: 0, cell: (s) => ((s.spec as JsonObject).externalIPs as string[] | undefined)?.join(',') || '<none>' },
    { name: 'Port(s)', type: 'string', description: 'The list of ports that are exposed by this service.', priority: 0, cell: (s) => (((s.spec as JsonObject).ports ?? []) as JsonObject[]).map((p) => `${p.port}/${p.protocol ?? 'TCP'}`).join(',') || '<none>' },
    AGE,
    { name: 'Selector', type: 'string', description: 'Route service traffic to pods with label keys and values matching this selector.', priority: 1, cell: (s) => Object.entries(((s.spec as JsonObject).selector ?? {}) as Record<string, string>).map(([k, v]) => `${k}=${v}`).join(',') || '<none>' },
  ],
};

const ENDPOINTS: ResourceType = {
  ...core,
  resource: 'endpoints',
  singular: 'endpoints',
  kind: 'Endpoints',
  listKind: 'EndpointsList',
  namespaced: true,
  verbs: READ_WRITE,
  shortNames: ['ep'],
  nameRule: 'dns1123-subdomain',
  schema: obj({ subsets: list(obj({ addresses: list('any'), notReadyAddresses: list('any'), ports: list('any') })) }),
  columns: [
    {
      name: 'Endpoints', type: 'string', description: 'Endpoints is the list of endpoints.', priority: 0,
      cell: (e) => ((e.subsets ?? []) as JsonObject[]).flatMap((s) => ((s.addresses ?? []) as JsonObject[]).flatMap((a) => ((s.ports ?? [{}]) as JsonObject[]).map((p) => (p.port ? `${a.ip}:${p.port}` : String(a.ip))))).join(',') || '<none>',
    },
    AGE,
  ],
};

const objectReference: Schema = obj({ apiVersion: 'string', fieldPath: 'string', kind: 'string', name: 'string', namespace: 'string', resourceVersion: 'string', uid: 'string' });

const EVENTS: ResourceType = {
  ...core,
  resource: 'events',
  singular: 'event',
  kind: 'Event',
  listKind: 'EventList',
  namespaced: true,
  verbs: READ_WRITE,
  shortNames: ['ev'],
  nameRule: 'dns1123-subdomain',
  schema: obj({
    action: 'string', count: 'integer', eventTime: 'any', firstTimestamp: 'any', involvedObject: objectReference, lastTimestamp: 'any',
    message: 'string', reason: 'string', related: objectReference, reportingComponent: 'string', reportingInstance: 'string',
    series: 'any', source: obj({ component: 'string', host: 'string' }), type: 'string',
  }),
  selectableFields: Object.fromEntries(
    [
      ...['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'].map((f) => [`involvedObject.${f}`, (e: KubeObject) => String((e.involvedObject as JsonObject | undefined)?.[f] ?? '')] as const),
      ['reason', (e: KubeObject) => String(e.reason ?? '')] as const,
      ['reportingComponent', (e: KubeObject) => String(e.reportingComponent ?? '')] as const,
      ['source', (e: KubeObject) => String((e.source as JsonObject | undefined)?.component ?? '')] as const,
      ['type', (e: KubeObject) => String(e.type ?? '')] as const,
    ],
  ),
  columns: [
    { name: 'Last Seen', type: 'string', description: 'The time at which the most recent occurrence of this event was recorded.', priority: 0, cell: (e) => (e.lastTimestamp ? String(e.lastTimestamp) : '<unknown>') },
    { name: 'Type', type: 'string', description: 'Type of this event (Normal, Warning).', priority: 0, cell: (e) => String(e.type ?? '') },
    { name: 'Reason', type: 'string', description: 'This should be a short, machine understandable string that gives the reason for the transition into the object\'s current status.', priority: 0, cell: (e) => String(e.reason ?? '') },
    { name: 'Object', type: 'string', description: 'The object that this event is about.', priority: 0, cell: (e) => `${String((e.involvedObject as JsonObject | undefined)?.kind ?? '').toLowerCase()}/${String((e.involvedObject as JsonObject | undefined)?.name ?? '')}` },
    { name: 'Message', type: 'string', description: 'A human-readable description of the status of this operation.', priority: 0, cell: (e) => String(e.message ?? '') },
  ],
};

const NODES: ResourceType = {
  ...core,
  resource: 'nodes',
  singular: 'node',
  kind: 'Node',
  listKind: 'NodeList',
  namespaced: false,
  verbs: READ_WRITE,
  shortNames: ['no'],
  subresources: [{ name: 'status', kind: 'Node', verbs: ['get', 'patch', 'update'] }],
  nameRule: 'dns1123-subdomain',
  statusField: 'status',
  schema: obj({
    spec: obj({ configSource: 'any', externalID: 'string', podCIDR: 'string', podCIDRs: list('string'), providerID: 'string', taints: list('any'), unschedulable: 'boolean' }),
    status: 'any',
  }),
  selectableFields: { 'spec.unschedulable': (n) => String((n.spec as JsonObject | undefined)?.unschedulable ?? false) },
  columns: [
    { name: 'Status', type: 'string', description: 'The status of the node', priority: 0, cell: nodeReady },
    { name: 'Roles', type: 'string', description: 'The roles of the node', priority: 0, cell: (n) => Object.keys(n.metadata.labels ?? {}).filter((k) => k.startsWith('node-role.kubernetes.io/')).map((k) => k.slice(24)).join(',') || '<none>' },
    AGE,
    { name: 'Version', type: 'string', description: 'Kubelet Version reported by the node.', priority: 0, cell: (n) => String(((n.status as JsonObject | undefined)?.nodeInfo as JsonObject | undefined)?.kubeletVersion ?? '') },
  ],
};

function nodeReady(node: KubeObject): string {
  const conditions = ((node.status as JsonObject | undefined)?.conditions ?? []) as JsonObject[];
  const ready = conditions.find((c) => c.type === 'Ready');
  return ready?.status === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown';
}

export const coreResources: readonly ResourceType[] = [NAMESPACES, PODS, CONFIGMAPS, SECRETS, SERVICEACCOUNTS, SERVICES, ENDPOINTS, EVENTS, NODES];


/**
 * What `portcullis up` applies to its own cluster so that the seed's admission example works as
 * the seed tells it: the policy engine registered as the service `opa/opa` (a Service and an
 * Endpoints object pointing at the engine's HTTPS listener), the `system.main` policy that turns
 * `kubernetes.admission` `deny` messages into an AdmissionReview answer (a policy ConfigMap, so the
 * sidecar loads it like any other), and the seed's v1beta1 ValidatingWebhookConfiguration naming
 * that service with the engine's CA as `caBundle`. Applied with server-side apply, so a restart
 * updates them in place.
 */
import type { KubeClient, KubeObject } from './kube.js';

export interface WebhookEndpoint {
  /** Where the engine's HTTPS listener is (an IP address). */
  readonly ip: string;
  readonly port: number;
  /** PEM of the CA that signed the engine's certificate for `opa.opa.svc`. */
  readonly ca: string;
}

export const WEBHOOK_CONFIGURATION = 'opa-validating-webhook';
export const WEBHOOK_NAME = 'validating-webhook.openpolicyagent.org';

/**
 * OPA's documented admission entry point (opa.md §5), in Rego v1 so that it loads whatever the
 * engine's default dialect is; `deny` messages are joined with ", ".
 */
export const SYSTEM_MAIN = `package system

import rego.v1

import data.kubernetes.admission

main := {
	"apiVersion": "admission.k8s.io/v1",
	"kind": "AdmissionReview",
	"response": response,
}

default uid := ""

uid := input.request.uid

response := {"allowed": false, "uid": uid, "status": {"message": reason}} if {
	reason := concat(", ", admission.deny)
	reason != ""
} else := {"allowed": true, "uid": uid}
`;

export function admissionManifests(endpoint: WebhookEndpoint): Array<{ path: string; object: KubeObject }> {
  const ns = 'opa';
  return [
    { path: `/api/v1/namespaces/${ns}`, object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } },
    {
      path: `/api/v1/namespaces/${ns}/services/opa`,
      object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'opa', namespace: ns }, spec: { ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: endpoint.port }] } },
    },
    {
      path: `/api/v1/namespaces/${ns}/endpoints/opa`,
      object: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'opa', namespace: ns }, subsets: [{ addresses: [{ ip: endpoint.ip }], ports: [{ name: 'https', protocol: 'TCP', port: endpoint.port }] }] },
    },
    {
      path: `/api/v1/namespaces/${ns}/configmaps/opa-default-system-main`,
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'opa-default-system-main', namespace: ns, labels: { 'openpolicyagent.org/policy': 'rego' } },
        data: { main: SYSTEM_MAIN },
      },
    },
    {
      path: `/apis/admissionregistration.k8s.io/v1beta1/validatingwebhookconfigurations/${WEBHOOK_CONFIGURATION}`,
      object: {
        apiVersion: 'admissionregistration.k8s.io/v1beta1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: WEBHOOK_CONFIGURATION },
        webhooks: [
          {
            name: WEBHOOK_NAME,
            rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
            clientConfig: { caBundle: Buffer.from(endpoint.ca).toString('base64'), service: { namespace: ns, name: 'opa' } },
          },
        ],
      },
    },
  ];
}

export async function applyAdmissionWiring(kube: KubeClient, endpoint: WebhookEndpoint): Promise<void> {
  for (const { path, object } of admissionManifests(endpoint)) await kube.apply(path, object, 'portcullis-up');
}

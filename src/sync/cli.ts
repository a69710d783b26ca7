/** `portcullis sync`: the sidecar, with kube-mgmt's flag names; and its part in `portcullis up`. */
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { StartupError } from '../common/errors.js';
import { closeOnSignal } from '../common/http.js';
import { createLogger } from '../common/log.js';
import type { ServiceModule } from '../common/service.js';
import { KubeClient } from './kube.js';
import { applyAdmissionWiring, WEBHOOK_CONFIGURATION, type WebhookEndpoint } from './wiring.js';
import { KUBE_MGMT_DEFAULTS } from './configmaps.js';
import { loadKubeconfig } from './kubeconfig.js';
import { parseReplicatedResource } from './replicate.js';
import { Sidecar } from './sidecar.js';


function collectList(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((v) => v.trim()).filter(Boolean)];
}

function syncCommand(): Command {
  return new Command('sync')
    .description('Load policy ConfigMaps and replicate cluster objects into the policy engine (kube-mgmt compatible).')
    .requiredOption('--kubeconfig <file>', 'kubeconfig of the API server to watch')
    .option('--context <name>', 'kubeconfig context (default: its current context)')
    .option('--opa-url <url>', 'policy engine v1 API base', 'http://localhost:8181/v1')
    .option('--opa-ca-file <file>', 'CA bundle to verify an HTTPS policy engine')
    .option('--opa-auth-token <token>', 'bearer token for the policy engine')
    .option('--opa-auth-token-file <file>', 'file holding the bearer token for the policy engine')
    .option('--namespaces <list>', 'namespaces whose ConfigMaps are loaded (comma-separated, repeatable; * = all)', collectList, [])
    .option('--policy-label <key>', 'label that marks policy ConfigMaps', KUBE_MGMT_DEFAULTS.policyLabel)
    .option('--policy-value <value>', 'its value', KUBE_MGMT_DEFAULTS.policyValue)
    .option('--data-label <key>', 'label that marks data ConfigMaps', KUBE_MGMT_DEFAULTS.dataLabel)
    .option('--data-value <value>', 'its value', KUBE_MGMT_DEFAULTS.dataValue)
    .addOption(new Option('--enable-policies <bool>', 'load policy ConfigMaps').choices(['true', 'false']).default('true'))
    .addOption(new Option('--enable-data <bool>', 'load data ConfigMaps').choices(['true', 'false']).default('true'))
    .option('--replicate <[group/]version/resource>', 'replicate a namespaced resource (repeatable)', collectList, [])
    .option('--replicate-cluster <[group/]version/resource>', 'replicate a cluster-scoped resource (repeatable)', collectList, [])
    .option('--replicate-path <path>', 'data path under which objects are replicated', 'kubernetes')
    .option('--replicate-ignore-namespaces <list>', 'namespaces not replicated', collectList, [])
    .option('--log-level <level>', 'trace, debug, info, warn, error', 'info')
    .action(async (flags) => {
      const logger = createLogger({ level: flags.logLevel, name: 'sync' });
      const token = flags.opaAuthTokenFile ? (await readText(flags.opaAuthTokenFile)).trim() : flags.opaAuthToken;
      const sidecar = new Sidecar({
        cluster: await loadKubeconfig(flags.kubeconfig, flags.context),
        engine: { url: flags.opaUrl, token, ca: flags.opaCaFile ? await readText(flags.opaCaFile) : undefined },
        namespaces: flags.namespaces,
        configMaps: {
          policyLabel: flags.policyLabel,
          policyValue: flags.policyValue,
          dataLabel: flags.dataLabel,
          dataValue: flags.dataValue,
          enablePolicies: flags.enablePolicies === 'true',
          enableData: flags.enableData === 'true',
          annotationDomain: flags.policyLabel.includes('/') ? flags.policyLabel.split('/')[0] : KUBE_MGMT_DEFAULTS.annotationDomain,
          maxRetries: KUBE_MGMT_DEFAULTS.maxRetries,
        },
        replicate: [
          ...flags.replicate.map((r: string) => parseReplicatedResource(r, true)),
          ...flags.replicateCluster.map((r: string) => parseReplicatedResource(r, false)),
        ],
        replicatePath: flags.replicatePath,
        replicateIgnoreNamespaces: flags.replicateIgnoreNamespaces,
        logger,
      });
      closeOnSignal(() => sidecar.close());
      await sidecar.start();
      logger.info('initial sync done; watching');
    });
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new StartupError(`${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/**
 * In `portcullis up` the sidecar connects the cluster (its admin kubeconfig, `details.kubeconfig`)
 * to the policy engine (its `url`, and `details.ca` when it serves TLS), and replicates namespaces
 * and pods so that admission policies can see what is deployed. When the engine offers a webhook
 * listener (`details.webhook`), the seed's admission wiring is applied first (wiring.ts), so that
 * the `system.main` ConfigMap is among the first things the sidecar loads.
 */
export const syncService: ServiceModule = {
  name: 'sync',
  summary: 'load policy ConfigMaps and cluster objects into the policy engine (kube-mgmt)',
  command: syncCommand,
  up: {
    async start(context) {
      const kubeconfig = context.started.get('cluster')?.details?.kubeconfig;
      const policy = context.started.get('policy');
      if (typeof kubeconfig !== 'string' || !policy?.url) return { skipped: 'it connects the cluster to the policy engine; both must run' };
      const cluster = await loadKubeconfig(kubeconfig);
      const webhook = policy.details?.webhook as WebhookEndpoint | undefined;
      if (webhook) {
        const kube = new KubeClient(cluster);
        try {
          await applyAdmissionWiring(kube, webhook);
        } finally {
          kube.close();
        }
      }
      const sidecar = new Sidecar({
        cluster,
        engine: { url: `${policy.url}/v1`, ca: policy.details?.ca as string | undefined, token: policy.details?.token as string | undefined },
        namespaces: [],
        configMaps: KUBE_MGMT_DEFAULTS,
        replicate: [parseReplicatedResource('v1/namespaces', false), parseReplicatedResource('v1/pods', true)],
        replicatePath: 'kubernetes',
        replicateIgnoreNamespaces: [],
        logger: context.logger,
      });
      await sidecar.start();
      return {
        name: 'sync',
        credentials: [
          { label: 'loads', value: 'ConfigMaps labelled openpolicyagent.org/policy=rego (policies) and openpolicyagent.org/data=opa (data)' },
          { label: 'replicates', value: 'namespaces and pods to data.kubernetes' },
          ...(webhook ? [{ label: 'admission', value: `ValidatingWebhookConfiguration ${WEBHOOK_CONFIGURATION} → service opa/opa → ${webhook.ip}:${webhook.port}` }] : []),
        ],
        close: () => sidecar.close(),
      };
    },
  },
};

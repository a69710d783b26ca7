import type { ServiceModule } from '../common/service.js';
import { policyService } from '../policy/cli.js';
import { secretsService } from '../secrets/cli.js';
import { clusterService } from '../cluster/cli.js';
import { syncService } from '../sync/cli.js';

/**
 * Every service of the `portcullis` command, in the order `portcullis up` starts them: a later
 * service may connect to an earlier one (the cluster's admission webhooks call the policy engine;
 * the sync sidecar needs both).
 */
export const services: readonly ServiceModule[] = [
  policyService,
  secretsService,
  clusterService,
  syncService,
];

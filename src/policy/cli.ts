/**
 * `portcullis policy …` and the policy engine's part in `portcullis up`: the `ServiceModule` listed
 * in src/cli/services.ts. The dependency rule keeps src/policy from importing src/cli, so the
 * object is checked against `ServiceModule` structurally where it is listed.
 *
 * The command is an assembly of subcommands, one factory per file in ./commands/.
 */
import path from 'node:path';
import { Command } from 'commander';
import type { Logger } from '../common/log.js';
import { runCommand } from './commands/run.js';
import { evalCommand } from './commands/eval.js';
import { testCommand } from './commands/test.js';
import { checkCommand } from './commands/check.js';
import { conformanceCommand } from './commands/conformance.js';
import { ensureCertificateAuthority } from '../common/tls.js';
import { startPolicyEngine } from './runtime.js';

const subcommands: ReadonlyArray<() => Command> = [
  runCommand,
  evalCommand,
  testCommand,
  checkCommand,
  conformanceCommand,
];

export const policyService = {
  name: 'policy',
  summary: 'the policy engine: Rego and the OPA REST API',
  command(): Command {
    const command = new Command('policy').description('The policy engine: a Rego interpreter behind the OPA REST API.');
    for (const make of subcommands) command.addCommand(make());
    return command;
  },
  up: {
    defaultPort: 8181,
    /**
     * The engine on loopback, its policies and data kept under <dataDir>/policy across restarts.
     * It accepts Rego v0 as OPA does with --v0-compatible (the seed's policies are v0; a module that
     * imports rego.v1 stays v1). Besides plain HTTP for people, it serves HTTPS on a second port
     * with a certificate for `opa.opa.svc` (CA under <dataDir>/policy/pki), for the cluster's
     * admission webhook (`details.webhook`, wired by the sync sidecar).
     */
    async start(context: { dataDir: string; host: string; port: number; logger: Logger }) {
      const ca = await ensureCertificateAuthority(path.join(context.dataDir, 'policy', 'pki'), 'portcullis-policy-ca');
      const serving = await ca.issueServer({ commonName: 'opa.opa.svc', hosts: ['opa.opa.svc', 'opa.opa.svc.cluster.local', context.host, 'localhost'] });
      const engine = await startPolicyEngine({
        address: { host: context.host, port: context.port },
        additionalListeners: [{ address: { host: context.host, port: 0 }, tls: serving }],
        regoVersion: 'v0',
        logger: context.logger,
        persistDir: path.join(context.dataDir, 'policy'),
      });
      const webhook = engine.additional[0]!;
      return {
        name: 'policy',
        url: engine.url,
        credentials: [{ label: 'admission webhook listener', value: `${webhook.url} (CA: ${path.join(context.dataDir, 'policy', 'pki', 'ca.crt')})` }],
        details: { webhook: { ip: context.host, port: webhook.port, ca: ca.cert } },
        close: () => engine.close(),
      };
    },
  },
};

/**
 * `portcullis policy run -s [flags] [PATH...]`: the policy engine as an HTTP server, with the flags
 * of `opa run` that matter to a server (OPA's REPL mode, `run` without `-s`, is not offered).
 */
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { UsageError } from '../../common/errors.js';
import { closeOnSignal, parseHostPort } from '../../common/http.js';
import { applySet, parseConfigText, type ConfigObject } from '../config.js';
import { startPolicyEngine } from '../runtime.js';

interface RunFlags {
  server?: boolean;
  addr: string;
  bundle?: boolean;
  watch?: boolean;
  set: string[];
  configFile?: string;
  v0Compatible?: boolean;
  authentication: 'token' | 'off';
  authorization: 'basic' | 'off';
  logLevel: string;
  logFormat: 'text' | 'json' | 'json-pretty';
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  ignore: string[];
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function runCommand(): Command {
  return new Command('run')
    .summary('run the policy engine server (OPA REST API)')
    .description(
      'Start the policy engine as an HTTP server speaking the OPA REST API. PATH arguments load policies (.rego) and data (.json, .yaml; `a.b:file.json` places a file under data.a.b); with -b each PATH is a bundle directory or .tar.gz.',
    )
    .argument('[paths...]', 'policy and data files, directories or bundles')
    .option('-s, --server', 'start the engine in server mode (required)')
    .option('-a, --addr <host:port>', 'address to listen on', 'localhost:8181')
    .option('-b, --bundle', 'load paths as bundle directories or .tar.gz files')
    .option('-w, --watch', 'reload policies and data when the files change')
    .option('--set <key=value>', 'override a config value (repeatable), e.g. default_decision=/x/y or decision_logs.console=true', collect, [])
    .option('-c, --config-file <file>', 'YAML or JSON config file (OPA keys)')
    .option('--v0-compatible', 'parse modules as Rego v0 (rules without `if`/`contains`)')
    .addOption(new Option('--authentication <mode>', 'authentication scheme of the API').choices(['token', 'off']).default('off'))
    .addOption(new Option('--authorization <mode>', 'authorization scheme of the API (basic: data.system.authz.allow)').choices(['basic', 'off']).default('off'))
    .addOption(new Option('-l, --log-level <level>', 'log level').choices(['debug', 'info', 'error']).default('info'))
    .addOption(new Option('--log-format <format>', 'log format').choices(['text', 'json', 'json-pretty']).default('json'))
    .option('--tls-cert-file <file>', 'serve HTTPS with this PEM certificate (with --tls-private-key-file)')
    .option('--tls-private-key-file <file>', 'PEM private key of --tls-cert-file')
    .option('--ignore <pattern>', 'skip files and directories whose name matches this glob (repeatable), e.g. .*', collect, [])
    .action(async (paths: string[], flags: RunFlags) => {
      if (!flags.server) throw new UsageError('policy run: only server mode is available; add -s (--server)');
      if (Boolean(flags.tlsCertFile) !== Boolean(flags.tlsPrivateKeyFile)) {
        throw new UsageError('policy run: --tls-cert-file and --tls-private-key-file go together');
      }
      let config: ConfigObject = flags.configFile ? parseConfigText(await readConfig(flags.configFile), flags.configFile) : {};
      for (const assignment of flags.set) config = applySet(config, assignment);
      const engine = await startPolicyEngine({
        address: parseAddress(flags.addr),
        paths,
        bundleMode: flags.bundle ?? false,
        watch: flags.watch ?? false,
        ignore: flags.ignore,
        config,
        regoVersion: flags.v0Compatible ? 'v0' : 'v1',
        authentication: flags.authentication,
        authorization: flags.authorization,
        log: { level: flags.logLevel, format: flags.logFormat },
        tls: flags.tlsCertFile && flags.tlsPrivateKeyFile ? { certFile: flags.tlsCertFile, keyFile: flags.tlsPrivateKeyFile } : undefined,
      });
      closeOnSignal(() => engine.close());
      process.stdout.write(`policy engine listening on ${engine.url}\n`);
    });
}

function parseAddress(value: string): { host: string; port: number } {
  try {
    return parseHostPort(value, '127.0.0.1');
  } catch (error) {
    throw new UsageError(`--addr: ${(error as Error).message}`);
  }
}

async function readConfig(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`config file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

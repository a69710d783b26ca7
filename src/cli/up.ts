/**
 * `portcullis up`: the whole development stack on its default addresses with embedded storage
 * under one data directory, printing the addresses and the credentials a user needs next.
 */
import { mkdir, stat, access } from 'node:fs/promises';
import { constants } from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { StartupError } from '../common/errors.js';
import { closeOnSignal } from '../common/http.js';
import { createLogger } from '../common/log.js';
import type { RunningService, ServiceModule } from '../common/service.js';

export interface UpOptions {
  dataDir: string;
  host?: string;
  ports?: Record<string, number>;
  logLevel?: string;
}

export function upCommand(modules: readonly ServiceModule[]): Command {
  const command = new Command('up')
    .summary('run the whole stack (every service) with embedded storage')
    .description('Run every service on its default address with embedded storage under the data directory, and print the addresses and credentials a user needs next.')
    .option('--data-dir <dir>', 'where every service keeps its state', './.portcullis')
    .option('--log-level <level>', 'trace, debug, info, warn, error or silent', 'warn');
  for (const module of modules) {
    if (module.up?.defaultPort === undefined) continue;
    command.addOption(new Option(`--${module.name}-port <n>`, `port of the ${module.name} service`).default(module.up.defaultPort).argParser(parsePort));
  }
  return command.action(async (flags: Record<string, string | number>) => {
    const ports: Record<string, number> = {};
    for (const module of modules) {
      const value = flags[`${module.name}Port`];
      if (typeof value === 'number') ports[module.name] = value;
    }
    const stack = await up(modules, { dataDir: String(flags.dataDir), ports, logLevel: String(flags.logLevel) });
    closeOnSignal(() => stack.close());
    process.stdout.write(stack.banner());
  });
}

export interface Stack {
  readonly services: ReadonlyMap<string, RunningService>;
  banner(): string;
  close(): Promise<void>;
}

/** Start every module that takes part in `up`, in order; on a failure, stop what was started and rethrow. */
export async function up(modules: readonly ServiceModule[], options: UpOptions): Promise<Stack> {
  const dataDir = path.resolve(options.dataDir);
  await prepareDataDir(dataDir);
  const logger = createLogger({ level: options.logLevel ?? 'warn', format: 'text' });
  const started = new Map<string, RunningService>();
  const skipped = new Map<string, string>();
  const close = async () => {
    for (const service of [...started.values()].reverse()) await service.close();
  };
  try {
    for (const module of modules) {
      if (!module.up) continue;
      const service = await module.up.start({
        dataDir,
        host: options.host ?? '127.0.0.1',
        port: options.ports?.[module.name] ?? module.up.defaultPort ?? 0,
        logger: logger.child({ service: module.name }),
        started,
      });
      if ('skipped' in service) skipped.set(module.name, service.skipped);
      else started.set(module.name, service);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return {
    services: started,
    close,
    banner: () => banner(dataDir, started, skipped),
  };
}

function banner(dataDir: string, started: ReadonlyMap<string, RunningService>, skipped: ReadonlyMap<string, string>): string {
  const lines = [`Portcullis is up. Data directory: ${dataDir}`, ''];
  if (started.size === 0) lines.push('No services are registered in this build.');
  for (const service of started.values()) {
    lines.push(`${service.name}${service.url ? `: ${service.url}` : ''}`);
    for (const { label, value } of service.credentials ?? []) lines.push(`  ${label}: ${value}`);
  }
  for (const [name, reason] of skipped) lines.push(`${name}: not started (${reason})`);
  lines.push('', 'Press Ctrl-C to stop.', '');
  return lines.join('\n');
}

async function prepareDataDir(dir: string): Promise<void> {
  const info = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new StartupError(`data directory ${dir}: ${error.code ?? error.message}`);
  });
  if (info && !info.isDirectory()) throw new StartupError(`data directory ${dir}: not a directory`);
  if (!info) await mkdir(dir, { recursive: true, mode: 0o700 });
  await access(dir, constants.W_OK | constants.R_OK).catch(() => {
    throw new StartupError(`data directory ${dir}: not readable and writable`);
  });
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('want a port number from 0 to 65535');
  return port;
}

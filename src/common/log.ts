import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export interface LogOptions {
  /** pino level name: trace, debug, info, warn, error, fatal, silent. */
  level?: string;
  /** `json` (one object per line, the default) or `text` (human-readable). */
  format?: 'json' | 'text';
  /** Where to write; default standard error, so that stdout stays for command output. */
  destination?: NodeJS.WritableStream;
  name?: string;
}

/**
 * Field paths that may carry a credential. pino replaces their values before anything is written,
 * so a careless `log.info({ req })` can never put a token or password in a log.
 */
export const REDACTED_PATHS = [
  'password',
  'token',
  'client_token',
  'secret_id',
  'api_token',
  'authorization',
  '*.password',
  '*.token',
  '*.client_token',
  '*.secret_id',
  '*.api_token',
  '*.authorization',
  'req.headers.authorization',
  'req.headers["x-vault-token"]',
  'req.headers["x-secrets-token"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-vault-token"]',
  'headers["x-secrets-token"]',
];

export function createLogger(options: LogOptions = {}): Logger {
  const config: LoggerOptions = {
    level: options.level ?? process.env.PORTCULLIS_LOG_LEVEL ?? 'info',
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: options.name ? { service: options.name } : undefined,
  };
  const destination = options.destination ?? process.stderr;
  if (options.format === 'text') {
    return pino(config, textStream(destination));
  }
  return pino(config, destination as DestinationStream);
}

/** A logger that writes nothing (tests, embedding). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

function textStream(out: NodeJS.WritableStream): DestinationStream {
  return {
    write(line: string) {
      try {
        const { level, time, msg, pid: _pid, hostname: _host, service, ...rest } = JSON.parse(line);
        const fields = Object.keys(rest).length ? ' ' + JSON.stringify(rest) : '';
        const who = service ? `[${service}] ` : '';
        out.write(`${new Date(time).toISOString()} ${LEVEL_NAMES[level] ?? level} ${who}${msg ?? ''}${fields}\n`);
      } catch {
        out.write(line);
      }
    },
  };
}

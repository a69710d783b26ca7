/**
 * Errors that end a command-line invocation. `main` prints their message as one line and exits
 * with their code: 2 for a usage mistake (unknown flag, bad value), 1 for a start-up failure
 * (port in use, unreadable data directory, unreachable etcd).
 */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CommandError';
  }
}

export class UsageError extends CommandError {
  constructor(message: string) {
    super(message, 2);
    this.name = 'UsageError';
  }
}

export class StartupError extends CommandError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 1, options);
    this.name = 'StartupError';
  }
}

/** A short, one-line description of an unknown thrown value. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}

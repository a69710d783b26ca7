/**
 * The one registration point of a service with the `portcullis` command (every service shares
 * this contract, so it lives in common). A service module
 * (`src/<service>/cli.ts`) exports a `ServiceModule`; `src/cli/services.ts` lists them. From that
 * list the command builds `portcullis <service> …` and `portcullis up`, including `up`'s
 * `--<service>-port` flags, so adding a service is one line there.
 */
import type { Command } from 'commander';
import type { Logger } from './log.js';

export interface ServiceModule {
  /** The subcommand name, e.g. `policy`. */
  readonly name: string;
  /** One line for `portcullis --help`. */
  readonly summary: string;
  /** Build the `portcullis <name>` command tree. */
  command(): Command;
  /** How `portcullis up` runs this service; absent when the service has no part in `up`. */
  readonly up?: UpHook;
}

export interface UpHook {
  /** The default port; `up` offers `--<name>-port N` to change it (0 picks a free one). */
  readonly defaultPort?: number;
  /**
   * Start the service; resolves once it serves. Services start in the order of the list.
   * Resolves to `{ skipped: reason }` when the service has nothing to do in this stack (for example
   * a sidecar whose peers are not part of this build); `up` prints the reason.
   */
  start(context: UpContext): Promise<RunningService | { readonly skipped: string }>;
}

export interface UpContext {
  /** The stack's data directory (created, writable); each service keeps its files below it. */
  readonly dataDir: string;
  /** The port chosen for this service (`--<name>-port`, or the default). */
  readonly port: number;
  /** Host to bind (loopback). */
  readonly host: string;
  readonly logger: Logger;
  /** The services started before this one, by name, so that later ones can connect to them. */
  readonly started: ReadonlyMap<string, RunningService>;
}

export interface RunningService {
  readonly name: string;
  /** The service's base address, e.g. `https://127.0.0.1:6443`. */
  readonly url?: string;
  /** What a user needs next: files written under the data directory, and other facts, to print. */
  readonly credentials?: ReadonlyArray<{ readonly label: string; readonly value: string }>;
  /** Anything a later service needs to connect (e.g. a CA bundle, a token). */
  readonly details?: Readonly<Record<string, unknown>>;
  close(): Promise<void>;
}

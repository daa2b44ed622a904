import type { ServerKind } from './server-handle.js';

/** Where a running server is, for probes and server-side commands. */
export interface ServerTarget {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** Pid of the main server process. */
  readonly pid: number;
  readonly dataDirectory: string | undefined;
}

/** What the test kit needs to know about one kind of server once it runs. */
export interface ServerOperations {
  readonly kind: ServerKind;
  /** Signal that makes the server shut down cleanly. */
  readonly gracefulStopSignal: NodeJS.Signals;
  /** One readiness probe: rejects unless the server answers and is the process we started. */
  checkReady(target: ServerTarget): Promise<void>;
  /** Closes every client connection from the server's side; returns how many. */
  dropClientConnections(target: ServerTarget): Promise<number>;
}

/** The kinds of server the test kit runs. */
export type ServerKind = 'redis' | 'postgres' | 'mariadb' | 'zookeeper' | 'etcd';

/**
 * A plain, serialisable description of a server: what vitest's `provide` hands to test workers,
 * and what {@link attachServer} turns back into a {@link ServerHandle}.
 */
export interface ServerInfo {
  readonly kind: ServerKind;
  readonly host: string;
  readonly port: number;
  /** Connection URL, e.g. `postgres://postgres@127.0.0.1:PORT/postgres`. */
  readonly url: string;
  /** `false` when the server came from an environment variable: fault hooks then throw. */
  readonly controllable: boolean;
  /** Pid of the server's main process (the PostgreSQL postmaster, the ZooKeeper JVM, …). */
  readonly pid?: number | undefined;
  /** The server's `os.tmpdir()/lockkit-testkit-*` directory, removed by `stop()`. */
  readonly temporaryDirectory?: string | undefined;
  /** Where the server keeps its data (inside `temporaryDirectory`). */
  readonly dataDirectory?: string | undefined;
  /** The server's stdout/stderr log (inside `temporaryDirectory`). */
  readonly logPath?: string | undefined;
  /** The command line the server runs with. */
  readonly command?: readonly string[] | undefined;
  /** For a server given through the environment: the variable's name. */
  readonly environmentVariable?: string | undefined;
}

/** One server used by tests, with hooks to inject faults into it. */
export interface ServerHandle extends AsyncDisposable {
  readonly kind: ServerKind;
  readonly host: string;
  readonly port: number;
  /** Connection URL, e.g. `redis://127.0.0.1:PORT`. */
  readonly url: string;
  /**
   * `false` when the server came from an environment variable (`LOCKKIT_*`). Every fault hook
   * then rejects with an explanation; `stop()` resolves without doing anything.
   */
  readonly controllable: boolean;
  /** Pid of the server's main process, or `undefined` when not controllable. */
  readonly pid: number | undefined;
  /** The server's stdout/stderr log, or `undefined` when not controllable. */
  readonly logPath: string | undefined;
  /** Freezes the server and all its processes (SIGSTOP): a hung node or a long GC pause. */
  pause(): Promise<void>;
  /** Unfreezes a paused server (SIGCONT). */
  resume(): Promise<void>;
  /** SIGKILLs the server's whole process tree and waits until it is gone. Data stays on disk. */
  kill(): Promise<void>;
  /** Stops the server gracefully (SIGKILL after 10 s), waits for it, removes its temp directory. */
  stop(): Promise<void>;
  /**
   * Starts the server again on the same port and data directory, stopping it gracefully first
   * if it still runs, and waits until it is ready. PostgreSQL, MariaDB and ZooKeeper keep their
   * data; Redis runs without persistence and comes back empty.
   */
  restart(): Promise<void>;
  /**
   * Closes every client connection from the server's side and returns how many it closed:
   * Redis `CLIENT KILL TYPE normal` and `TYPE pubsub`, PostgreSQL `pg_terminate_backend`,
   * MariaDB `KILL CONNECTION`; ZooKeeper has no command for this, so every session is closed
   * (which expires it: ephemeral nodes vanish and the client gets a session-expired event);
   * etcd has none either, so every lease is revoked (each client's session: its keys vanish).
   */
  dropClientConnections(): Promise<number>;
  /** The serialisable description of this server (the pid changes after `restart()`). */
  describe(): ServerInfo;
}

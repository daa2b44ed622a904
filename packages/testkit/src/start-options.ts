/** Options every `start…` function accepts. */
export interface ServerStartOptions {
  /** Overall deadline for the server to answer its readiness probe. Default 30 000 ms. */
  readonly startTimeoutMs?: number;
  /**
   * Use the server named by the kind's `LOCKKIT_*` environment variable when it is set, instead
   * of starting one (the handle is then not controllable). Default `true`.
   */
  readonly useEnvironment?: boolean;
  /**
   * More environment variables for the server process (on top of this process's), e.g. to
   * preload libfaketime and move the server's wall clock. Ignored with a server from the
   * environment.
   */
  readonly environment?: Readonly<Record<string, string>>;
}

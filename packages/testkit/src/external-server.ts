import type { EnvironmentServer } from './environment-overrides.js';
import type { ServerHandle, ServerInfo, ServerKind } from './server-handle.js';

/**
 * A server the test kit did not start (given through a `LOCKKIT_*` variable): usable through
 * its URL, but every fault hook rejects, since it may be a server others rely on.
 */
export class ExternalServer implements ServerHandle {
  readonly kind: ServerKind;
  readonly host: string;
  readonly port: number;
  readonly url: string;
  readonly controllable = false;
  readonly pid: undefined = undefined;
  readonly logPath: undefined = undefined;
  /** The environment variable the URL came from. */
  readonly environmentVariable: string;

  constructor(server: EnvironmentServer) {
    this.kind = server.kind;
    this.host = server.host;
    this.port = server.port;
    this.url = server.url;
    this.environmentVariable = server.environmentVariable;
  }

  pause(): Promise<void> {
    return this.#refuse('pause');
  }

  resume(): Promise<void> {
    return this.#refuse('resume');
  }

  kill(): Promise<void> {
    return this.#refuse('kill');
  }

  /** Does nothing: the server is not ours to stop. */
  async stop(): Promise<void> {}

  restart(): Promise<void> {
    return this.#refuse('restart');
  }

  dropClientConnections(): Promise<number> {
    return this.#refuse('dropClientConnections');
  }

  describe(): ServerInfo {
    return {
      kind: this.kind,
      host: this.host,
      port: this.port,
      url: this.url,
      controllable: false,
      environmentVariable: this.environmentVariable,
    };
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  async #refuse(hook: string): Promise<never> {
    throw new Error(
      `Cannot ${hook}() the ${this.kind} server ${this.url}: it was given through ` +
        `${this.environmentVariable}, so the test kit does not control it. ` +
        `Skip fault tests when handle.controllable is false (unset ${this.environmentVariable} ` +
        'to let the test kit start a throwaway server).',
    );
  }
}

/** The parts of node-zookeeper-client (which ships no types) that the tests use. */
declare module 'node-zookeeper-client' {
  import type { EventEmitter } from 'node:events';

  export interface Client extends EventEmitter {
    connect(): void;
    close(): void;
    getSessionTimeout(): number;
    create(
      path: string,
      data: Buffer,
      mode: number,
      callback: (error: Error | null, path: string) => void,
    ): void;
    getData(path: string, callback: (error: Error | null, data: Buffer) => void): void;
  }

  export interface ClientOptions {
    sessionTimeout?: number;
    spinDelay?: number;
    retries?: number;
  }

  export function createClient(connectionString: string, options?: ClientOptions): Client;

  export const CreateMode: {
    readonly PERSISTENT: number;
    readonly EPHEMERAL: number;
  };
}

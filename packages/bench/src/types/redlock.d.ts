// redlock@5.0.0-beta.2 ships types that its package.json "exports" does not expose, so
// NodeNext resolution cannot see them: the part the benchmark uses.
declare module 'redlock' {
  import type { Redis } from 'ioredis';

  export interface Settings {
    readonly driftFactor: number;
    readonly retryCount: number;
    readonly retryDelay: number;
    readonly retryJitter: number;
    readonly automaticExtensionThreshold: number;
  }

  export interface Lock {
    release(): Promise<unknown>;
  }

  export default class Redlock {
    constructor(clients: Iterable<Redis>, settings?: Partial<Settings>);
    acquire(resources: string[], duration: number, settings?: Partial<Settings>): Promise<Lock>;
    quit(): Promise<void>;
  }
}

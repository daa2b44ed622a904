import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import type { Contender, LockClient } from '../contender.js';

/**
 * The file peer: proper-lockfile (which lockkit's file backend also builds on). It cannot
 * wait for a release; its waiter retries every 10 ms, as `retries: { minTimeout: 10,
 * maxTimeout: 10 }` would (written out as a loop: proper-lockfile's `retry` dependency
 * allocates an array with one entry per allowed retry on every call).
 */
export function filePeers(directory: string): Contender[] {
  const root = join(directory, 'proper-lockfile');
  return [
    {
      backend: 'file',
      library: 'proper-lockfile@4.1.2',
      lockkit: false,
      waits: true,
      holdsMany: true,
      async open(): Promise<LockClient> {
        mkdirSync(root, { recursive: true });
        return {
          async acquire(name) {
            const target = join(root, encodeURIComponent(name));
            for (;;) {
              try {
                return await lockfile.lock(target, { realpath: false });
              } catch (error) {
                if ((error as { code?: unknown }).code !== 'ELOCKED') throw error;
                await sleep(10);
              }
            }
          },
          close: async () => undefined,
        };
      },
    },
  ];
}

/**
 * The `environment` start option reaches the server process itself (what `pnpm chaos --faults
 * clock` relies on to start servers under libfaketime): read back from /proc/<pid>/environ.
 * Not redis-server: it overwrites that memory with its process title (its option is covered
 * by packages/redis/test/server-clock-jump.test.ts, whose server clock moves under it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ServerHandle,
  startEtcd,
  startMariaDb,
  startPostgres,
  startZooKeeper,
} from '../src/index.js';

const started: ServerHandle[] = [];
afterAll(async () => {
  await Promise.all(started.map((server) => server.stop()));
});

function environmentOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
}

const starts = {
  postgres: startPostgres,
  mariadb: startMariaDb,
  zookeeper: startZooKeeper,
  etcd: startEtcd,
} as const;

describe.skipIf(!existsSync('/proc/self/environ'))('the environment start option', () => {
  it.each(Object.keys(starts) as (keyof typeof starts)[])(
    '%s: the server process has the variables',
    async (kind) => {
      const mark = `${kind}-${process.pid}`;
      const server = await starts[kind]({
        useEnvironment: false,
        environment: { LOCKKIT_TESTKIT_MARK: mark },
      });
      started.push(server);
      expect(environmentOf(server.pid!)).toContain(`LOCKKIT_TESTKIT_MARK=${mark}`);
    },
    120_000,
  );
});

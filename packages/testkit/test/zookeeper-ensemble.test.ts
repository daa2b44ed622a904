/**
 * `startZooKeeperEnsemble(3)`: members in network namespaces of their own, and `partition()` /
 * `heal()` per member. Needs root and iproute2; skipped, with the reason printed, where the
 * namespaces cannot be made.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { NetworkNamespacesUnavailableError, startZooKeeperEnsemble } from '../src/index.js';

const timeScale = Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1);
const tag = `lke${process.pid % 100_000}`;

/** This process's namespaces and links (every one the test kit makes starts with `tag`). */
function leftovers(): string[] {
  const namespaces = execFileSync('ip', ['netns', 'list']).toString().split('\n');
  const links = execFileSync('ip', ['-brief', 'link']).toString().split('\n');
  return [...namespaces, ...links].filter((line) => line.startsWith(tag));
}

/** Resolves once `condition` holds (asked every 100 ms); rejects after `timeoutMs`. */
async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const started = await startZooKeeperEnsemble(3).catch((error: unknown) => {
  if (error instanceof NetworkNamespacesUnavailableError) return error;
  throw error;
});
const unavailable = started instanceof Error ? started.message : undefined;
if (unavailable) console.warn(`ZooKeeper ensemble tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('startZooKeeperEnsemble(3)', () => {
  const ensemble = started as Exclude<typeof started, Error>;

  it('runs each member in its own namespace at an address of its own; one leads, two follow', async () => {
    expect(new Set(ensemble.members.map((member) => member.host)).size).toBe(3);
    expect(ensemble.url).toBe(
      `zookeeper://${ensemble.members.map((member) => `${member.host}:2181`).join(',')}`,
    );
    const modes = await Promise.all(ensemble.members.map((member) => member.mode()));
    expect(modes.sort()).toEqual(['follower', 'follower', 'leader']);
    expect(await (await ensemble.leader()).mode()).toBe('leader');
    expect(leftovers().length).toBeGreaterThanOrEqual(3 + 3 + 1); // namespaces, veths, bridge
  });

  it('partition() cuts a follower off while the other two keep serving; heal() brings it back', async () => {
    const leader = await ensemble.leader();
    const [follower, other] = ensemble.members.filter((member) => member !== leader);
    await follower!.partition();
    try {
      expect(await follower!.mode()).toBeUndefined(); // unreachable from here
      expect(await leader.mode()).toBe('leader');
      expect(await other!.mode()).toBe('follower');
    } finally {
      await follower!.heal();
    }
    await until(async () => (await follower!.mode()) === 'follower', 20_000 * timeScale);
  }, 60_000);

  it('stop() removes every namespace, veth pair and bridge it made', async () => {
    await ensemble.stop();
    expect(leftovers()).toEqual([]);
  });
});

/**
 * A real network partition: a Redis lock holder runs in a network namespace of its own,
 * joined to the Redis server by a veth pair with addresses private to this run
 * (10.213.x.0/30); taking the pair's link down cuts the holder off while both keep running.
 * Needs root and iproute2; skipped, with the reason printed, where a namespace cannot be made.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createRedisLockProvider } from '@lockkit/redis';
import { type ServerHandle, startRedisServer } from '@lockkit/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const timeScale = Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1);
const leaseMs = 1500;
const tag = `lk${process.pid % 100_000}`;
const namespace = `${tag}ns`;
const [outside, inside] = [`${tag}a`, `${tag}b`];
const subnet = `10.213.${process.pid % 250}`;
const [serverAddress, holderAddress] = [`${subnet}.1`, `${subnet}.2`];

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: 'pipe' });
}

/** Makes the namespace and the veth pair; the reason why not, if it cannot. */
function makeNetwork(): string | undefined {
  try {
    ip('netns', 'add', namespace);
    ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
    ip('link', 'set', inside, 'netns', namespace);
    ip('addr', 'add', `${serverAddress}/30`, 'dev', outside);
    ip('link', 'set', outside, 'up');
    ip('netns', 'exec', namespace, 'ip', 'addr', 'add', `${holderAddress}/30`, 'dev', inside);
    ip('netns', 'exec', namespace, 'ip', 'link', 'set', inside, 'up');
    ip('netns', 'exec', namespace, 'ip', 'link', 'set', 'lo', 'up');
    return undefined;
  } catch (error) {
    removeNetwork();
    return `cannot make a network namespace (root and iproute2 needed): ${String(error).split('\n')[0]}`;
  }
}

function removeNetwork(): void {
  for (const args of [
    ['link', 'del', outside],
    ['netns', 'del', namespace],
  ]) {
    try {
      ip(...args);
    } catch {
      // Not made, or already gone.
    }
  }
}

const unavailable = process.platform === 'linux' ? makeNetwork() : 'not Linux';
if (unavailable) console.warn(`partition tests skipped: ${unavailable}`);
afterAll(removeNetwork);

/** The holder process inside the namespace, talking JSON lines. */
interface Holder {
  readonly child: ChildProcess;
  next(): Promise<Record<string, unknown>>;
}

function startHolder(url: string): Holder {
  const script = fileURLToPath(new URL('./fixtures/partitioned-holder.ts', import.meta.url));
  const child = spawn(
    'ip',
    ['netns', 'exec', namespace, process.execPath, '--import', 'tsx', script],
    {
      env: { ...process.env, REDIS_URL: url, LOCK_NAME: 'partitioned', LEASE_MS: String(leaseMs) },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    child,
    next: async () => {
      const line = await lines.next();
      if (line.done) throw new Error('the holder exited');
      return JSON.parse(line.value) as Record<string, unknown>;
    },
  };
}

describe.skipIf(unavailable !== undefined)('a Redis holder cut off by a real partition', () => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startRedisServer({
      useEnvironment: false,
      extraArguments: ['--bind', '127.0.0.1', serverAddress],
    });
  });
  afterAll(() => server?.stop());

  it('loses its lease while it runs on: its signal reports it, a contender gets the lock, the fence refuses the holder, release() → false after the heal', async () => {
    const holder = startHolder(`redis://${serverAddress}:${server.port}`);
    try {
      const acquired = await holder.next();
      expect(acquired).toMatchObject({ event: 'acquired' });
      const holderToken = BigInt(acquired['token'] as string);
      ip('link', 'set', outside, 'down'); // the partition: both sides keep running
      const cutAt = performance.now();
      const lost = holder.next().then((message) => ({ message, at: performance.now() }));
      const contenders = createRedisLockProvider({ nodes: server.url, leaseMs });
      const contender = await contenders
        .createLock('partitioned')
        .acquire({ timeout: (leaseMs + 2000) * timeScale });
      const grantedAt = performance.now();
      // Its token is above the holder's: a fence that saw it refuses the holder's writes.
      expect(contender.fencingToken).toBeGreaterThan(holderToken);
      // The holder noticed on its own side of the cut: its lease ran out on its clock.
      const { message, at: lostAt } = await lost;
      expect(message).toMatchObject({ event: 'lost' });
      console.log(
        `partition: contender granted ${Math.round(grantedAt - cutAt)} ms after the cut, holder's lost signal seen ${Math.round(lostAt - cutAt)} ms after it (${String(message['reason'])}) (lease ${leaseMs} ms, lostDetectionMs ${String(acquired['lostDetectionMs'])})`,
      );
      expect(lostAt - cutAt).toBeLessThanOrEqual(
        (leaseMs + Number(acquired['lostDetectionMs'])) * timeScale,
      );
      ip('link', 'set', outside, 'up'); // heal
      holder.child.stdin!.write('release\n');
      expect(await holder.next()).toMatchObject({ event: 'released', held: false });
      expect(await contender.release()).toBe(true);
      await contenders.close();
    } finally {
      ip('link', 'set', outside, 'up');
      if (holder.child.exitCode === null) holder.child.kill('SIGKILL');
      await once(holder.child, 'exit').catch(() => undefined);
    }
  }, 30_000);
});

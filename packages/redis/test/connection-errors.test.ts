import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BackendUnavailableError } from '@lockkit/core';
import { findFreePort, type ServerHandle, startRedisServer } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRedisLockProvider, type RedisLockProvider } from '../src/index.js';
import { scaled, testLeaseMs } from './support.js';

// Its own server: these tests set passwords and pause it.
let server: ServerHandle;
let admin: Redis;
let address: string;
const opened: RedisLockProvider[] = [];
const commandTimeoutMs = 250;

beforeAll(async () => {
  server = await startRedisServer({ useEnvironment: false });
  const { port } = new URL(server.url);
  address = `127.0.0.1:${port}`;
  admin = new Redis(server.url);
  await admin.acl('SETUSER', 'alice', 'on', '>alice-secret', '~*', '&*', '+@all');
});

afterAll(async () => {
  await Promise.all(opened.map((provider) => provider.close()));
  admin.disconnect();
  await server.stop();
});

function provider(nodes: string): RedisLockProvider {
  const created = createRedisLockProvider({ nodes, leaseMs: testLeaseMs, commandTimeoutMs });
  opened.push(created);
  return created;
}

/** The error of one tryAcquire() on `nodes`, and how long it took. */
async function failureOf(nodes: string): Promise<{ error: BackendUnavailableError; ms: number }> {
  const started = performance.now();
  const outcome = await provider(nodes)
    .createLock('connection-errors')
    .tryAcquire()
    .then(
      (handle) => new Error(`resolved ${handle === null ? 'null' : 'a handle'}`),
      (error: unknown) => error,
    );
  const ms = performance.now() - started;
  expect(BackendUnavailableError.isInstance(outcome), String(outcome)).toBe(true);
  return { error: outcome as BackendUnavailableError, ms };
}

const causeOf = (error: Error): Error & { code?: string } => error.cause as Error;

describe('a server that cannot be used fails with the reason as cause and the address', () => {
  it('connection refused: at once, not after a connect timeout', async () => {
    const port = await findFreePort();
    const { error, ms } = await failureOf(`redis://127.0.0.1:${port}`);
    expect(error.message).toBe(
      `Redis 127.0.0.1:${port} could not connect: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect(causeOf(error).code).toBe('ECONNREFUSED');
    expect(ms).toBeLessThan(scaled(commandTimeoutMs));
  });

  it('an unknown host', async () => {
    const { error } = await failureOf('redis://no-such-host.invalid:6379');
    expect(error.message).toMatch(
      /^Redis no-such-host\.invalid:6379 could not connect: getaddrinfo/,
    );
    expect(causeOf(error).code).toMatch(/^(ENOTFOUND|EAI_AGAIN)$/);
  });

  it('a wrong password for the default user', async () => {
    await admin.config('SET', 'requirepass', 'right-secret');
    try {
      const { error } = await failureOf(`redis://:wrong-secret@${address}`);
      expect(error.message).toMatch(new RegExp(`^Redis ${address} could not connect: WRONGPASS`));
      expect(causeOf(error).name).toBe('ReplyError');
      expect(error.retryable).toBe(false); // not an outage: fails even an untimed acquire
      await expect(
        provider(`redis://:wrong-secret@${address}`).createLock('untimed').acquire(),
      ).rejects.toSatisfy(BackendUnavailableError.isInstance);
      // The right one works.
      const handle = await provider(`redis://:right-secret@${address}`)
        .createLock('pw')
        .tryAcquire();
      expect(handle).not.toBeNull();
      await handle?.release();
    } finally {
      await admin.config('SET', 'requirepass', '');
    }
  });

  it('an ACL user that does not exist, or with a wrong password', async () => {
    for (const user of ['mallory:alice-secret', 'alice:wrong']) {
      const { error } = await failureOf(`redis://${user}@${address}`);
      expect(error.message).toMatch(new RegExp(`^Redis ${address} could not connect: WRONGPASS`));
      expect(causeOf(error).name).toBe('ReplyError');
      expect(error.retryable).toBe(false);
    }
    const handle = await provider(`redis://alice:alice-secret@${address}`)
      .createLock('acl')
      .tryAcquire();
    expect(handle).not.toBeNull();
    await handle?.release();
  });

  it('a database index the server does not have: no silent fallback to db 0', async () => {
    await admin.flushall();
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const { error } = await failureOf(`redis://${address}/99`);
      expect(error.message).toBe(
        `Redis ${address} could not connect: ERR DB index is out of range`,
      );
      expect(causeOf(error).name).toBe('ReplyError');
      expect(error.retryable).toBe(false);
    }
    expect(await admin.dbsize()).toBe(0); // nothing was written to db 0
  });

  it('a hung server: cut at the command timeout, connecting or connected', async () => {
    const warm = provider(server.url);
    await (await warm.createLock('hung').acquire({ timeout: 1000 })).release();
    const cold = `redis://${address}/0`; // not connected yet
    await server.pause();
    try {
      const connected = await warm
        .createLock('hung')
        .tryAcquire()
        .catch((e: unknown) => e as BackendUnavailableError);
      expect((connected as Error).message).toBe(
        `Redis ${address} did not answer acquire-mutex within ${commandTimeoutMs} ms`,
      );
      expect(causeOf(connected as Error).message).toMatch(/no answer within 250 ms/);
      const { error, ms } = await failureOf(cold);
      expect(error.message).toBe(
        `Redis ${address} could not connect within ${commandTimeoutMs} ms`,
      );
      expect(causeOf(error).message).toMatch(/no answer within 250 ms/);
      expect(ms).toBeLessThan(scaled(warm.capabilities.unavailableMs));
    } finally {
      await server.resume();
    }
  });
});

describe('processes exit', () => {
  const child = fileURLToPath(new URL('./idle-exit-child.ts', import.meta.url));
  const urls = inject('lockkitServers').redisUrls;

  /** Runs the child script; resolves with its output once it exited on its own. */
  function run(nodes: readonly string[], deadPort: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const process_ = spawn(process.execPath, ['--import', 'tsx', child], {
        env: {
          ...process.env,
          LOCKKIT_TEST_REDIS_NODES: nodes.join(','),
          LOCKKIT_TEST_DEAD_NODE: `redis://127.0.0.1:${deadPort}`,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      process_.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      const timer = setTimeout(() => {
        process_.kill('SIGKILL');
        reject(new Error(`the script did not exit on its own (output: ${output})`));
      }, scaled(10_000));
      process_.on('exit', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(output);
        else reject(new Error(`the script exited with ${code} (output: ${output})`));
      });
    });
  }

  it.each([1, 3])(
    'a script that acquires, waits, releases and never calls close() exits (%i node(s))',
    async (count) => {
      const output = await run(urls.slice(0, count), await findFreePort());
      expect(output).toBe('held, handed over, released; the dead node failed\n');
    },
  );
});

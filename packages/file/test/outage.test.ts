import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { BackendUnavailableError, LockLostError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { createFileLockProvider } from '../src/index.js';
import { ms, TEST_LEASE_MS, temporaryDirectory } from './support.js';

const root = temporaryDirectory('outage');

describe.each(['sync', 'async'] as const)('a lock directory that cannot be used (io: %s)', (io) => {
  it('under a regular file: every call fails at once, naming the directory, cause ENOTDIR', async () => {
    writeFileSync(join(root, `file-${io}`), 'not a directory');
    const directory = join(root, `file-${io}`, 'locks');
    const locks = createFileLockProvider({ directory, leaseMs: TEST_LEASE_MS, io });
    for (const call of [
      () => locks.createLock('m').tryAcquire(),
      () => locks.createLock('m').acquire({ timeout: ms(100) }),
      () => locks.createReadWriteLock('rw').tryAcquireRead(),
      () => locks.createSemaphore('s', 2).tryAcquire(),
    ]) {
      const error = await call().then(
        () => new Error('resolved'),
        (e: unknown) => e,
      );
      expect(BackendUnavailableError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(
        new RegExp(`^File lock backend: the lock directory ${directory} cannot be used: mkdir `),
      );
      expect(((error as Error).cause as { code?: string }).code).toBe('ENOTDIR');
    }
    await locks.close();
  });

  it('replaced by a file while a lock is held: release() false, the signal names it', async () => {
    const directory = join(root, `replaced-${io}`);
    const locks = createFileLockProvider({ directory, leaseMs: TEST_LEASE_MS, io });
    const handle = await locks.createLock('held').acquire();
    renameSync(directory, `${directory}.aside`);
    writeFileSync(directory, 'not a directory');
    try {
      expect(await handle.release()).toBe(false);
      const reason = handle.signal.reason as LockLostError;
      expect(LockLostError.isInstance(reason)).toBe(true);
      const cause = reason.cause as BackendUnavailableError;
      expect(BackendUnavailableError.isInstance(cause)).toBe(true);
      expect(cause.message).toContain(`the lock directory ${directory} cannot be used`);
      expect((cause.cause as { code?: string }).code).toBe('ENOTDIR');
      await locks.close();
    } finally {
      rmSync(directory);
      renameSync(`${directory}.aside`, directory);
    }
  });
});

it('a directory that does not exist is created, with its parents, on the first acquire', async () => {
  const directory = join(root, 'missing', 'parents', 'locks');
  const locks = createFileLockProvider({ directory, leaseMs: TEST_LEASE_MS });
  expect(existsSync(directory)).toBe(false); // nothing happens before the first acquire
  const handle = await locks.createLock('first').acquire();
  expect(existsSync(directory)).toBe(true);
  expect(await handle.release()).toBe(true);
  await locks.close();
});

it('a script that acquires and releases but never calls close() exits on its own', async () => {
  const script = fileURLToPath(new URL('./fixtures/idle-script.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, join(root, 'idle')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  expect((await lines.next()).value).toBe('released true');
  const timer = setTimeout(() => child.kill('SIGKILL'), ms(5000));
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  expect(code).toBe(0); // null: it had to be killed
});

import { spawn } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { channelNames } from '@lockkit/core';
import { afterAll, beforeAll, expect } from 'vitest';
import {
  createFileLockProvider,
  type FileLockProvider,
  type FileLockProviderOptions,
} from '../src/index.js';

export { waitFor as waitUntil } from '@lockkit/conformance';

/** Lease used by the tests (short, so abandoned locks free up quickly). */
export const TEST_LEASE_MS = 2000;

/** Stretches every timing bound (LOCKKIT_TIME_SCALE, for slow machines). */
export const TIME_SCALE: number = Number(process.env['LOCKKIT_TIME_SCALE'] ?? 1);

/** `value` ms scaled by {@link TIME_SCALE}. */
export function ms(value: number): number {
  return value * TIME_SCALE;
}

/** Resolves when some acquire on this process starts waiting (core's 'lockkit:wait' event). */
export function nextWait(): Promise<void> {
  return new Promise((resolve) => {
    const onWait = (): void => {
      unsubscribe(channelNames.wait, onWait);
      resolve();
    };
    subscribe(channelNames.wait, onWait);
  });
}

/** A fresh lock directory under the OS temp dir, removed after the file's tests. */
export function temporaryDirectory(label: string): string {
  const directory = mkdtempSync(join(tmpdir(), `lockkit-file-${label}-`));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

/** Providers on `directory` that are closed after the file's tests. */
export function providerFactory(
  directory: string,
  options: Omit<FileLockProviderOptions, 'directory'> = {},
): () => FileLockProvider {
  const created: FileLockProvider[] = [];
  afterAll(async () => {
    await Promise.all(created.map((provider) => provider.close()));
  });
  return () => {
    const provider = createFileLockProvider({ directory, leaseMs: TEST_LEASE_MS, ...options });
    created.push(provider);
    return provider;
  };
}

/** A JSON-lines child process running `test/fixtures/<script>.ts` under tsx. */
export interface ChildProcessHandle {
  readonly pid: number;
  /** Sends one command line. */
  send(message: Record<string, unknown>): void;
  /** The next message from the child (rejects if it exits or is silent for `timeoutMs`). */
  next(timeoutMs?: number): Promise<Record<string, unknown>>;
  kill(): Promise<void>;
}

export async function startChild(
  script: string,
  env: Record<string, string>,
): Promise<ChildProcessHandle> {
  const path = fileURLToPath(new URL(`./fixtures/${script}.ts`, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', path], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const queue: Record<string, unknown>[] = [];
  const waiters: ((message: Record<string, unknown>) => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    const waiter = waiters.shift();
    if (waiter) waiter(message);
    else queue.push(message);
  });
  const exited = once(child, 'exit');
  const handle: ChildProcessHandle = {
    pid: child.pid!,
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    next: (timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const queued = queue.shift();
        if (queued) return resolve(queued);
        const timer = setTimeout(
          () => reject(new Error(`child ${script} silent for ${timeoutMs} ms:\n${stderr}`)),
          timeoutMs,
        );
        void exited.then(() => {
          clearTimeout(timer);
          reject(new Error(`child ${script} exited:\n${stderr}`));
        });
        waiters.push((message) => {
          clearTimeout(timer);
          resolve(message);
        });
      }),
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
  afterAll(() => handle.kill());
  const ready = await handle.next();
  if (ready['event'] !== 'ready')
    throw new Error(`child ${script} failed: ${JSON.stringify(ready)}`);
  return handle;
}

/**
 * Background work must report through the signal, never as a crash: fails the file if an
 * unhandled rejection or uncaught exception happened during its tests.
 */
export function failOnBackgroundCrash(): void {
  const crashes: unknown[] = [];
  const onCrash = (error: unknown): void => {
    crashes.push(error);
  };
  beforeAll(() => {
    process.on('unhandledRejection', onCrash);
    process.on('uncaughtException', onCrash);
  });
  afterAll(() => {
    process.off('unhandledRejection', onCrash);
    process.off('uncaughtException', onCrash);
    expect(crashes).toEqual([]);
  });
}

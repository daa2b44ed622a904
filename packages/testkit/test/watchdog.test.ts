import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { isProcessAlive, waitForProcessesToExit } from '../src/process-tree.js';
import { nextEvent } from './support.js';

const packageDirectory = dirname(dirname(fileURLToPath(import.meta.url)));
const fixture = join(packageDirectory, 'test/fixtures/start-servers-child.ts');

interface Started {
  /** The servers' main processes. */
  readonly roots: number[];
  /** The main processes and all their descendants at the time. */
  readonly pids: number[];
  readonly directories: string[];
}

async function startChild(mode: 'wait' | 'exit') {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, mode], {
    cwd: packageDirectory,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = nextEvent(child, 'exit');
  const [line] = await nextEvent(createInterface({ input: child.stdout }), 'line');
  const started = JSON.parse(String(line)) as Started;
  return { child, exited, started };
}

describe('no server outlives the process that started it', () => {
  it('a watchdog kills the servers (postmaster, backends) when their parent is SIGKILLed', async () => {
    const { child, exited, started } = await startChild('wait');
    try {
      expect(started.pids.length).toBeGreaterThan(started.roots.length);
      expect(started.roots.filter((pid) => !isProcessAlive(pid))).toEqual([]);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    expect(await waitForProcessesToExit(started.pids, 5_000)).toBe(true);
    await vi.waitFor(
      () => expect(started.directories.filter((directory) => existsSync(directory))).toEqual([]),
      { timeout: 5_000, interval: 50 },
    );
  });

  it('servers die with a parent that exits without stopping them (exit hook)', async () => {
    const { exited, started } = await startChild('exit');
    await exited;
    expect(await waitForProcessesToExit(started.pids, 1_000)).toBe(true);
    expect(started.directories.filter((directory) => existsSync(directory))).toEqual([]);
  });
});

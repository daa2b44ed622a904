import { mkdirSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { LockTimeoutError } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { keyDirName } from '../src/index.js';
import {
  failOnBackgroundCrash,
  ms,
  nextWait,
  providerFactory,
  temporaryDirectory,
  waitUntil,
} from './support.js';

// Contract guarantee 10: a waiting writer is preferred over new readers, also while it is
// still waiting for the gate (held by another writer, or by a dead holder).
const directory = temporaryDirectory('rw-preference');
// A safety poll far longer than any wait below: only fs.watch and stale timers wake waiters.
const provider = providerFactory(directory, { pollIntervalMs: 60_000 });
failOnBackgroundCrash();

interface Held {
  release(): Promise<boolean>;
}

/** Records the order in which `waiting` acquisitions are granted. */
function grantOrder(waiting: Record<string, Promise<Held>>): {
  order: string[];
  handles: Record<string, Promise<Held>>;
} {
  const order: string[] = [];
  const handles: Record<string, Promise<Held>> = {};
  for (const [label, promise] of Object.entries(waiting)) {
    handles[label] = promise.then((handle) => {
      order.push(label);
      return handle;
    });
  }
  return { order, handles };
}

const keyDir = (name: string): string => join(directory, keyDirName('', 'write', name));

describe('RW lock: a writer waiting for the gate goes before new readers', () => {
  it('writer W1 holds, W2 waits, then reader R waits: W1 releases, W2 is granted first', async () => {
    const w1 = await provider().createReadWriteLock('held').acquireWrite();
    let waits = nextWait();
    const w2 = provider()
      .createReadWriteLock('held')
      .acquireWrite({ timeout: ms(5000) });
    await waits;
    waits = nextWait();
    const reader = provider().createReadWriteLock('held');
    const r = reader.acquireRead({ timeout: ms(5000) });
    await waits;
    const { order, handles } = grantOrder({ w2, r });
    expect(await w1.release()).toBe(true);
    // The gate is free now and W2 has not run yet: a new reader must still be refused.
    expect(await reader.tryAcquireRead()).toBeNull();
    await Promise.race(Object.values(handles));
    expect(order).toEqual(['w2']);
    const writer = await handles['w2']!;
    expect(await writer.release()).toBe(true);
    const read = await handles['r']!;
    expect(order).toEqual(['w2', 'r']);
    expect(await read.release()).toBe(true);
    // Nobody waits or holds any more: only the fencing counter is left.
    expect(readdirSync(keyDir('held')).filter((name) => !name.startsWith('fence.'))).toEqual([]);
  });

  it('a dead holder’s gate: W2 waits for its lease, then R waits; W2 is granted first', async () => {
    // R's provider has the shorter lease, so it finds the dead holder stale first (as in the
    // chaos run, where readers won the takeover race): deterministic without the fix.
    const writers = providerFactory(directory, { pollIntervalMs: 60_000, leaseMs: ms(3000) });
    const readers = providerFactory(directory, { pollIntervalMs: 60_000, leaseMs: ms(2000) });
    // A killed holder left its marker in the gate; its last heartbeat was ms(1400) ago.
    const gate = join(keyDir('abandoned'), 'gate');
    mkdirSync(join(gate, '1.dead00.x.1'), { recursive: true });
    const lastBeat = (Date.now() - ms(1400)) / 1000;
    utimesSync(gate, lastBeat, lastBeat);
    let waits = nextWait();
    const w2 = writers()
      .createReadWriteLock('abandoned')
      .acquireWrite({ timeout: ms(5000) });
    await waits;
    waits = nextWait();
    const r = readers()
      .createReadWriteLock('abandoned')
      .acquireRead({ timeout: ms(5000) });
    await waits;
    const { order, handles } = grantOrder({ w2, r });
    await Promise.race(Object.values(handles));
    expect(order).toEqual(['w2']);
    const writer = await handles['w2']!;
    expect(await writer.release()).toBe(true);
    const read = await handles['r']!;
    expect(order).toEqual(['w2', 'r']);
    expect(await read.release()).toBe(true);
    expect(readdirSync(keyDir('abandoned')).filter((n) => !n.startsWith('fence.'))).toEqual([]);
  });

  it('a writer that gave up waiting leaves no intent marker behind', async () => {
    const w1 = await provider().createReadWriteLock('gave-up').acquireWrite();
    const entries = (): string[] => readdirSync(keyDir('gave-up')).sort();
    const before = entries();
    const waits = nextWait();
    const w2 = provider()
      .createReadWriteLock('gave-up')
      .acquireWrite({ timeout: ms(300) });
    await waits;
    expect(entries().filter((name) => name.startsWith('w.'))).toHaveLength(1);
    await expect(w2).rejects.toBeInstanceOf(LockTimeoutError);
    await waitUntil(() => entries().length === before.length, ms(1000), 'the intent marker to go');
    expect(entries()).toEqual(before);
    expect(await provider().createReadWriteLock('gave-up').tryAcquireWrite()).toBeNull();
    expect(entries()).toEqual(before); // a single try never announces itself
    expect(await w1.release()).toBe(true);
    const reader = await provider().createReadWriteLock('gave-up').tryAcquireRead();
    expect(reader).not.toBeNull();
    expect(await reader!.release()).toBe(true);
  });

  it('a killed waiting writer’s intent marker blocks readers only until its lease runs out', async () => {
    const readers = providerFactory(directory, { pollIntervalMs: 60_000, leaseMs: ms(2000) });
    const intent = join(keyDir('crashed'), 'w.1.dead00.x.1');
    mkdirSync(intent, { recursive: true });
    const lastBeat = (Date.now() - ms(2000) + ms(300)) / 1000; // stale in ms(300)
    utimesSync(intent, lastBeat, lastBeat);
    const lock = readers().createReadWriteLock('crashed');
    expect(await lock.tryAcquireRead()).toBeNull(); // live: readers respect it
    const started = performance.now();
    const reader = await lock.acquireRead({ timeout: ms(5000) });
    expect(performance.now() - started).toBeGreaterThanOrEqual(ms(300) - 50);
    expect(readdirSync(keyDir('crashed')).filter((name) => name.startsWith('w.'))).toEqual([]);
    expect(await reader.release()).toBe(true);
  });
});

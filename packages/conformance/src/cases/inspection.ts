import {
  BackendUnavailableError,
  InvalidArgumentError,
  type LockHandle,
  type LockHolder,
  LockLostError,
  type LockState,
  ProviderClosedError,
} from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import {
  abortedWithin,
  acquirerFor,
  type Fixture,
  type LockSpec,
  nextWaitFor,
  titled,
} from '../support.js';

/** Reads a lock's state through a primitive of `spec`'s family. */
type Inspect = (spec: LockSpec, name: string) => Promise<LockState>;

/** The primitives and how many holds each case takes (RW: readers; semaphore(3): permits). */
const shapes = [
  { label: 'mutex', spec: { kind: 'mutex', maxCount: 1 }, holds: 1 },
  { label: 'write lock', spec: { kind: 'write', maxCount: 1 }, holds: 1 },
  { label: 'read lock', spec: { kind: 'read', maxCount: Number.POSITIVE_INFINITY }, holds: 2 },
  { label: 'semaphore(3)', spec: { kind: 'semaphore', maxCount: 3 }, holds: 2 },
] as const satisfies readonly { label: string; spec: LockSpec; holds: number }[];

/**
 * `lock.inspect()` and `lock.forceRelease()` (docs/contract.md, "Inspection and
 * force-release"), gated by `capabilities.inspection` (weighted holds: and
 * `capabilities.weightedPermits`).
 */
export function inspectionCases(fx: Fixture, supported: boolean, weighted = false): void {
  const skip = supported ? undefined : 'capabilities.inspection is not true';
  const weightedSkip = skip ?? (weighted ? undefined : 'capabilities.weightedPermits is not true');
  const inspectWith =
    (provider: Awaited<ReturnType<Fixture['provider']>>): Inspect =>
    (spec, name) =>
      primitive(provider, spec, name).inspect();

  describe('inspection and force-release', () => {
    it.runIf(!supported)('without capabilities.inspection both are a typed error', async () => {
      const lock = (await fx.provider()).createLock(fx.name('no-inspect'));
      await expect(lock.inspect()).rejects.toThrow(InvalidArgumentError);
      await expect(lock.forceRelease()).rejects.toThrow(InvalidArgumentError);
    });

    for (const { label, spec, holds } of shapes) {
      it.runIf(supported)(
        titled(`${label}: inspect reports every hold with token, owner and since`, skip),
        async () => {
          const name = fx.name(`inspect-${spec.kind}`);
          const owner = `conformance owner ${spec.kind} ✓`;
          const holder = await fx.provider({ owner });
          const inspect = inspectWith(await fx.provider({ owner: 'observer' }));
          const free = await inspect(spec, name);
          expect(free).toMatchObject({ name, held: false, holders: [] });
          expect(free.permitsFree).toBe(spec.kind === 'semaphore' ? spec.maxCount : undefined);
          const before = Date.now();
          const handles: LockHandle[] = [];
          for (let i = 0; i < holds; i++) {
            handles.push(await acquirerFor(holder, name, spec).acquire({ timeout: fx.ms(5000) }));
          }
          const after = Date.now();
          const state = await inspect(spec, name);
          expect(state.name).toBe(name);
          expect(state.primitive).toBe(primitiveName(spec));
          expect(state.held).toBe(true);
          expect(byToken(state.holders).map((h) => h.fencingToken)).toEqual(
            handles.map((h) => h.fencingToken).sort(compareBigint),
          );
          for (const hold of state.holders) {
            expect(hold.kind).toBe(spec.kind);
            expect(hold.permits).toBe(1);
            expect(hold.owner).toBe(owner);
            // Server clocks may differ from ours by a little: allow 2 s either way.
            expect(hold.since).toBeGreaterThanOrEqual(before - 2000);
            expect(hold.since).toBeLessThanOrEqual(after + 2000);
            expect(hold.validUntil).toBeGreaterThan(before);
          }
          expect(state.permitsFree).toBe(
            spec.kind === 'semaphore' ? spec.maxCount - holds : undefined,
          );
          for (const handle of handles) expect(await handle.release()).toBe(true);
          expect(await inspect(spec, name)).toMatchObject({ held: false, holders: [] });
        },
        60_000,
      );
    }

    it.runIf(supported)(
      titled('inspect counts a waiting writer where the server knows its waiters', skip),
      async () => {
        const name = fx.name('inspect-waiting');
        const spec: LockSpec = { kind: 'write', maxCount: 1 };
        const held = await acquirerFor(await fx.provider(), name, spec).acquire();
        const queued = nextWaitFor(name);
        const waiter = acquirerFor(await fx.provider(), name, spec).acquire({
          timeout: fx.ms(20_000),
        });
        await queued;
        const state = await inspectWith(await fx.provider())(spec, name);
        expect(state.holders).toHaveLength(1);
        if (state.waiting !== undefined) expect(state.waiting).toBe(1);
        await held.release();
        await (await waiter).release();
      },
      60_000,
    );

    for (const { label, spec, holds } of shapes) {
      it.runIf(supported)(
        titled(
          `${label}: forceRelease breaks every hold: signals abort in the declared bound, late releases report false, the next token is higher`,
          skip,
        ),
        async () => {
          const name = fx.name(`force-${spec.kind}`);
          const [holder, operator, next] = [
            await fx.provider(),
            await fx.provider(),
            await fx.provider(),
          ];
          const bound = fx.ms(holder.capabilities.lostDetectionMs + 500);
          const handles: LockHandle[] = [];
          for (let i = 0; i < holds; i++) {
            handles.push(await acquirerFor(holder, name, spec).acquire({ timeout: fx.ms(5000) }));
          }
          expect(await primitive(operator, spec, name).forceRelease()).toBe(holds);
          for (const handle of handles) {
            expect(LockLostError.isInstance(await abortedWithin(handle.signal, bound))).toBe(true);
          }
          // Every hold is gone: the whole lock can be taken again (all 3 permits of a semaphore).
          const successors: LockHandle[] = [];
          for (let i = 0; i < fullCount(spec); i++) {
            successors.push(
              await acquirerFor(next, name, successorOf(spec)).acquire({ timeout: bound }),
            );
          }
          for (const handle of handles) {
            for (const successor of successors) {
              expect(successor.fencingToken).toBeGreaterThan(handle.fencingToken);
            }
            expect(await handle.release()).toBe(false);
          }
          // The late releases did not free the successors' holds.
          expect(await acquirerFor(operator, name, successorOf(spec)).tryAcquire()).toBeNull();
          for (const successor of successors) {
            expect(successor.signal.aborted).toBe(false);
            expect(await successor.release()).toBe(true);
          }
          expect(await primitive(operator, spec, name).forceRelease()).toBe(0);
        },
        60_000,
      );
    }

    it.runIf(supported && weighted)(
      titled(
        'a weighted hold is one holder with its permits; forceRelease counts it once and frees them all',
        weightedSkip,
      ),
      async () => {
        const name = fx.name('inspect-weighted');
        const owner = 'weighted owner';
        const [holder, operator, next] = [
          await fx.provider({ owner }),
          await fx.provider(),
          await fx.provider(),
        ];
        const semaphore = (provider: typeof holder) => provider.createSemaphore(name, 5);
        const bound = fx.ms(holder.capabilities.lostDetectionMs + 500);
        const three = await semaphore(holder).acquire({ permits: 3, timeout: fx.ms(5000) });
        const state = await semaphore(operator).inspect();
        expect(state.held).toBe(true);
        expect(state.holders).toHaveLength(1);
        expect(state.holders[0]).toMatchObject({
          kind: 'semaphore',
          permits: 3,
          fencingToken: three.fencingToken,
          owner,
        });
        expect(state.permitsFree).toBe(2);
        expect(await semaphore(operator).forceRelease()).toBe(1);
        expect(LockLostError.isInstance(await abortedWithin(three.signal, bound))).toBe(true);
        // All five permits are free again: one request takes them all.
        const all = await semaphore(next).acquire({ permits: 5, timeout: bound });
        expect(all.fencingToken).toBeGreaterThan(three.fencingToken);
        expect(await three.release()).toBe(false);
        const after = await semaphore(operator).inspect();
        expect(after.holders.map((h) => h.permits)).toEqual([5]);
        expect(after.permitsFree).toBe(0);
        expect(await all.release()).toBe(true);
        expect(await semaphore(operator).forceRelease()).toBe(0);
      },
      60_000,
    );

    it.runIf(supported)(
      titled('forceRelease leaves waiters queued: the first is granted', skip),
      async () => {
        const name = fx.name('force-waiter');
        const spec: LockSpec = { kind: 'mutex', maxCount: 1 };
        const [holder, waiting, operator] = [
          await fx.provider(),
          await fx.provider(),
          await fx.provider(),
        ];
        const bound = fx.ms(holder.capabilities.lostDetectionMs + 500);
        const held = await acquirerFor(holder, name, spec).acquire();
        const queued = nextWaitFor(name);
        const waiter = acquirerFor(waiting, name, spec).acquire({ timeout: fx.ms(20_000) });
        await queued;
        expect(await primitive(operator, spec, name).forceRelease()).toBe(1);
        const granted = await waiter;
        await abortedWithin(held.signal, bound);
        expect(granted.fencingToken).toBeGreaterThan(held.fencingToken);
        expect(await held.release()).toBe(false);
        expect(await granted.release()).toBe(true);
      },
      60_000,
    );

    it.runIf(supported)(
      titled('after close, inspect and forceRelease reject with ProviderClosedError', skip),
      async () => {
        const provider = await fx.provider();
        const lock = provider.createLock(fx.name('closed'));
        await provider.close();
        await expect(lock.inspect()).rejects.toThrow(ProviderClosedError);
        await expect(lock.forceRelease()).rejects.toThrow(ProviderClosedError);
      },
    );

    const outage = fx.options.faults?.outage;
    it.runIf(supported && outage)(
      titled(
        'on a server that cannot be reached both reject with BackendUnavailableError',
        skip ?? (outage ? undefined : 'no faults.outage hook'),
      ),
      async () => {
        const provider = await outage!.createUnreachableProvider();
        fx.adopt(provider);
        const lock = provider.createLock(fx.name('unreachable'));
        await expect(lock.inspect()).rejects.toThrow(BackendUnavailableError);
        await expect(lock.forceRelease()).rejects.toThrow(BackendUnavailableError);
      },
      60_000,
    );
  });
}

function primitive(
  provider: Awaited<ReturnType<Fixture['provider']>>,
  spec: LockSpec,
  name: string,
): { inspect(): Promise<LockState>; forceRelease(): Promise<number> } {
  if (spec.kind === 'mutex') return provider.createLock(name);
  if (spec.kind === 'semaphore') return provider.createSemaphore(name, spec.maxCount);
  return provider.createReadWriteLock(name);
}

/** Who takes the whole lock after a break: a writer after readers, else the same kind. */
function successorOf(spec: LockSpec): LockSpec {
  return spec.kind === 'read' ? { kind: 'write', maxCount: 1 } : spec;
}

/** How many holds of {@link successorOf} fill the lock. */
function fullCount(spec: LockSpec): number {
  return spec.kind === 'semaphore' ? spec.maxCount : 1;
}

function primitiveName(spec: LockSpec): LockState['primitive'] {
  return spec.kind === 'read' || spec.kind === 'write' ? 'read-write' : spec.kind;
}

function byToken(holders: readonly LockHolder[]): LockHolder[] {
  return [...holders].sort((a, b) => compareBigint(a.fencingToken ?? 0n, b.fencingToken ?? 0n));
}

function compareBigint(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

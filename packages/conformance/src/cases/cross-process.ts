import { describe, expect, it } from 'vitest';
import { spawnHolder } from '../child/spawn-holder.js';
import { acquirerFor, type Fixture, nextWaitFor, type Subject, titled } from '../support.js';

/** A child process holds the lock; release and SIGKILL free it. */
export function crossProcessCases(fx: Fixture, subject: Subject, crossProcess: boolean): void {
  const child = fx.options.childProvider;
  const skip = !crossProcess
    ? 'the backend is in-process only (capabilities.crossProcess = false)'
    : child
      ? undefined
      : 'no childProvider option';

  describe('cross-process', () => {
    // Once per backend (with the mutex), not once per subject.
    if (subject.spec.kind === 'mutex') {
      it.runIf(!skip)(
        titled('after release() and close() nothing of the provider keeps its process alive', skip),
        async () => {
          const holder = await spawnHolder(
            child!,
            fx.name('child-exit'),
            subject.spec,
            fx.ms(20_000),
            { naturalExit: true },
          );
          fx.defer(() => holder.kill());
          expect(await holder.release()).toBe(true);
          // No timer, socket, watcher or retry left: the child's event loop runs dry.
          expect(await holder.exitsWithin(fx.ms(5_000))).toBe(true);
        },
        60_000,
      );
    }

    it.runIf(!skip)(
      titled('a child holds it → we cannot; the child releases → we can', skip),
      async () => {
        const name = fx.name('child-release');
        await fx.prefill(subject, name);
        const holder = await spawnHolder(child!, name, subject.blocker, fx.ms(20_000));
        fx.defer(() => holder.kill());
        const mine = acquirerFor(await fx.provider(), name, subject.spec);
        expect(await mine.tryAcquire({ timeout: fx.ms(100) })).toBeNull();
        const waiting = mine.acquire({ timeout: fx.ms(10_000) });
        expect(await holder.release()).toBe(true);
        const handle = await waiting;
        expect(handle.fencingToken).toBeGreaterThan(holder.fencingToken);
        await handle.release();
      },
      60_000,
    );

    it.runIf(!skip)(
      titled('a SIGKILLed holder frees the lock within the declared bound', skip),
      async () => {
        const name = fx.name('child-kill');
        await fx.prefill(subject, name);
        const provider = await fx.provider();
        const bound = fx.ms(provider.capabilities.abandonedReleaseMs + 1000);
        const holder = await spawnHolder(child!, name, subject.blocker, fx.ms(20_000));
        const mine = acquirerFor(provider, name, subject.spec);
        expect(await mine.tryAcquire()).toBeNull();
        await holder.kill();
        const handle = await mine.acquire({ timeout: bound });
        expect(handle.fencingToken).toBeGreaterThan(holder.fencingToken);
        await handle.release();
      },
      120_000,
    );

    it.runIf(!skip)(
      titled(
        'a release in a child process reaches our waiter within two round trips + 150 ms',
        skip,
      ),
      async () => {
        const name = fx.name('child-handoff');
        await fx.prefill(subject, name);
        const provider = await fx.provider();
        const bound = fx.ms(2 * (await fx.roundTripMs(provider)) + 150);
        const holder = await spawnHolder(child!, name, subject.blocker, fx.ms(20_000));
        fx.defer(() => holder.kill());
        const waited = nextWaitFor(name);
        const waiting = acquirerFor(provider, name, subject.spec)
          .acquire({ timeout: fx.ms(10_000) })
          .then((handle) => ({ handle, at: performance.now() }));
        await waited;
        // The clock starts when the child reports its release done.
        const released = await holder.release();
        const releasedAt = performance.now();
        expect(released).toBe(true);
        const { handle, at } = await waiting;
        expect(at - releasedAt).toBeLessThanOrEqual(bound);
        await handle.release();
      },
      60_000,
    );
  });
}

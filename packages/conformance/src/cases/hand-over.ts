import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, LockLostError, withNamePrefix } from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { spawnHolder } from '../child/spawn-holder.js';
import { abortedWithin, acquirerFor, type Fixture, type LockSpec, titled } from '../support.js';
import { resumeOnceCases } from './hand-over-once.js';
import { cases, resume } from './hand-over-support.js';

const mutex: LockSpec = { kind: 'mutex', maxCount: 1 };

const noHook = (hook: unknown): string | undefined =>
  hook ? undefined : 'no faults.loseLock hook';

/** The same token with every owner id (a UUID) in the backend's grant data replaced. */
function forged(token: string): { token: string; replaced: number } {
  const body = JSON.parse(Buffer.from(token.slice(4), 'base64url').toString()) as {
    grant: Record<string, unknown>;
  };
  let replaced = 0;
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
  for (const [key, value] of Object.entries(body.grant)) {
    if (typeof value !== 'string') continue;
    body.grant[key] = value.replace(uuid, () => {
      replaced += 1;
      return randomUUID();
    });
  }
  return { token: `lk1.${Buffer.from(JSON.stringify(body)).toString('base64url')}`, replaced };
}

/**
 * Hand-over (`capabilities.handOver`): `handle.export()` in one provider, `resume(token)` in
 * another (or a child process) continues the same hold; elsewhere both are refused before I/O.
 */
export function handOverCases(fx: Fixture, handOver: boolean, weighted: boolean): void {
  const skip = handOver ? undefined : 'capabilities.handOver is false';
  const child = fx.options.childProvider;
  const skipChild = skip ?? (child ? undefined : 'no childProvider option');

  describe('hand-over', () => {
    for (const { spec, rival } of cases) {
      it.runIf(handOver)(
        titled(`${spec.kind}: resumed elsewhere it is the same hold; the exporter let go`, skip),
        async () => {
          const [a, b, c] = [await fx.provider(), await fx.provider(), await fx.provider()];
          const name = fx.name(`hand-over-${spec.kind}`);
          const held = await acquirerFor(a, name, spec).acquire({ timeout: fx.ms(5000) });
          const token = held.export();
          expect(typeof token).toBe('string');
          expect(held.validUntil).toBe(0);
          expect(held.signal.aborted).toBe(false); // handed on, not lost
          expect(() => held.export()).toThrow(InvalidArgumentError);
          // The exporter's close() does not release a hold it handed over.
          await a.close();
          const resumed = await resume(b, name, spec, token);
          expect(resumed.fencingToken).toBe(held.fencingToken);
          expect(resumed.kind).toBe(spec.kind);
          expect(resumed.name).toBe(name);
          expect(resumed.signal.aborted).toBe(false);
          const contender = acquirerFor(c, name, rival);
          expect(await contender.tryAcquire({ timeout: fx.ms(100) })).toBeNull();
          // The exporter's release answers false and leaves the hold alone.
          expect(await held.release()).toBe(false);
          expect(await contender.tryAcquire()).toBeNull();
          expect(await resumed.release()).toBe(true);
          const next = await contender.acquire({ timeout: fx.ms(5000) });
          expect(next.fencingToken).toBeGreaterThan(resumed.fencingToken);
          await next.release();
          // A stale token (the hold was released): LockLostError.
          await expect(resume(c, name, spec, token)).rejects.toSatisfy(LockLostError.isInstance);
        },
        30_000,
      );
    }

    resumeOnceCases(fx, handOver, weighted);

    it.runIf(handOver)(
      titled('the resumer keeps the hold alive after the exporter is gone', skip),
      async () => {
        const [a, b, c] = [await fx.provider(), await fx.provider(), await fx.provider()];
        const name = fx.name('hand-over-kept');
        const held = await a.createLock(name).acquire({ timeout: fx.ms(5000) });
        const token = held.export();
        await a.close();
        const resumed = await b.createLock(name).resume(token);
        // Longer than an abandoned hold lasts: only the resumer's extensions keep it.
        const outlive = b.capabilities.abandonedReleaseMs + fx.ms(500);
        await new Promise((resolve) => setTimeout(resolve, outlive));
        expect(resumed.signal.aborted).toBe(false);
        expect(resumed.validUntil).toBeGreaterThan(Date.now());
        expect(await c.createLock(name).tryAcquire()).toBeNull();
        expect(await resumed.release()).toBe(true);
      },
      60_000,
    );

    it.runIf(handOver)(
      titled('a token of another lock, kind, maxCount or namespace, or a garbled one', skip),
      async () => {
        const [a, b] = [await fx.provider(), await fx.provider()];
        const other = await fx.provider({ namespace: 'hand-over-elsewhere' });
        const name = fx.name('hand-over-refused');
        const held = await a.createLock(name).acquire({ timeout: fx.ms(5000) });
        const token = held.export();
        const permit = await a.createSemaphore(name, 3).acquire({ timeout: fx.ms(5000) });
        const permitToken = permit.export();
        const refusals: Promise<unknown>[] = [
          b.createLock(fx.name('another-lock')).resume(token),
          b.createReadWriteLock(name).resume(token),
          b.createSemaphore(name, 1).resume(token),
          b.createSemaphore(name, 2).resume(permitToken),
          b.createLock(name).resume(permitToken),
          other.createLock(name).resume(token),
          b.createLock(name).resume(''),
          b.createLock(name).resume('lk1.garbage'),
          b.createLock(name).resume(token.slice(0, -6)),
          b.createLock(name).resume(`lk9.${token.slice(4)}`),
          b.createLock(name).resume(42 as unknown as string),
        ];
        for (const refusal of refusals) {
          await expect(refusal).rejects.toBeInstanceOf(InvalidArgumentError);
        }
        // Nothing was taken from the hold: the right lock resumes it.
        const resumed = await b.createLock(name).resume(token);
        expect(await resumed.release()).toBe(true);
        expect(await (await b.createSemaphore(name, 3).resume(permitToken)).release()).toBe(true);
      },
      30_000,
    );

    it.runIf(handOver)(
      titled('a forged owner id is refused with LockLostError; the holder keeps the lock', skip),
      async () => {
        const [a, b] = [await fx.provider(), await fx.provider()];
        const name = fx.name('hand-over-forged');
        const held = await a.createLock(name).acquire({ timeout: fx.ms(5000) });
        const real = held.export();
        const fake = forged(real);
        expect(fake.replaced).toBeGreaterThan(0);
        await expect(b.createLock(name).resume(fake.token)).rejects.toSatisfy(
          LockLostError.isInstance,
        );
        const resumed = await b.createLock(name).resume(real);
        expect(await b.createLock(name).tryAcquire()).toBeNull();
        expect(await resumed.release()).toBe(true);
      },
      30_000,
    );

    it.runIf(handOver)(
      titled('through withNamePrefix: same prefix resumes, the bare name does not', skip),
      async () => {
        const [a, b] = [await fx.provider(), await fx.provider()];
        const name = fx.name('hand-over-prefixed');
        const [pa, pb] = [withNamePrefix(a, 'tenant/'), withNamePrefix(b, 'tenant/')];
        const held = await pa.createLock(name).acquire({ timeout: fx.ms(5000) });
        const token = held.export();
        await expect(b.createLock(name).resume(token)).rejects.toBeInstanceOf(InvalidArgumentError);
        const resumed = await pb.createLock(name).resume(token);
        expect(resumed.name).toBe(name);
        expect(resumed.fencingToken).toBe(held.fencingToken);
        expect(await pb.createLock(name).tryAcquire()).toBeNull();
        expect(await resumed.release()).toBe(true);
      },
      30_000,
    );

    it.runIf(handOver && child !== undefined)(
      titled(
        'resumed in a child process: same token, it excludes us, its release frees',
        skipChild,
      ),
      async () => {
        const provider = await fx.provider();
        const name = fx.name('hand-over-child');
        const held = await provider.createLock(name).acquire({ timeout: fx.ms(5000) });
        // Exported once the child is up (an exported hold nobody extends lasts one lease).
        const resume = (): string => held.export();
        const holder = await spawnHolder(child!, name, mutex, fx.ms(20_000), { resume });
        fx.defer(() => holder.kill());
        expect(holder.fencingToken).toBe(held.fencingToken);
        const mine = provider.createLock(name);
        expect(await mine.tryAcquire({ timeout: fx.ms(100) })).toBeNull();
        expect(await holder.release()).toBe(true);
        const next = await mine.acquire({ timeout: fx.ms(5000) });
        expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
        await next.release();
      },
      60_000,
    );

    const loseLock = fx.options.faults?.loseLock;
    it.runIf(loseLock)(
      titled('export() of a lost handle throws its LockLostError', noHook(loseLock)),
      async () => {
        const provider = await fx.provider();
        const handle = await provider.createLock(fx.name('hand-over-lost')).acquire();
        await loseLock!(handle, provider);
        const bound = fx.ms(provider.capabilities.lostDetectionMs + 500);
        const reason = await abortedWithin(handle.signal, bound);
        expect(() => handle.export()).toThrow(reason as Error);
        expect(LockLostError.isInstance(reason)).toBe(true);
        expect(await handle.release()).toBe(false);
      },
      60_000,
    );

    it('export() of a released handle is an InvalidArgumentError', async () => {
      const provider = await fx.provider();
      const handle = await provider.createLock(fx.name('hand-over-released')).acquire();
      expect(await handle.release()).toBe(true);
      expect(() => handle.export()).toThrow(InvalidArgumentError);
    });

    it.runIf(!handOver)(
      titled(
        'export() and resume() are refused before any I/O',
        handOver ? 'capabilities.handOver is true' : undefined,
      ),
      async () => {
        const provider = await fx.provider();
        const name = fx.name('hand-over-unsupported');
        const handle = await provider.createLock(name).acquire({ timeout: fx.ms(5000) });
        expect(() => handle.export()).toThrow(/capabilities\.handOver/);
        expect(() => handle.export()).toThrow(InvalidArgumentError);
        await expect(provider.createLock(name).resume('lk1.e30')).rejects.toThrow(
          /capabilities\.handOver/,
        );
        await expect(provider.createReadWriteLock(name).resume('')).rejects.toBeInstanceOf(
          InvalidArgumentError,
        );
        await expect(provider.createSemaphore(name, 2).resume('')).rejects.toBeInstanceOf(
          InvalidArgumentError,
        );
        // The refused export let nothing go.
        expect(handle.validUntil).not.toBe(0);
        expect(await handle.release()).toBe(true);
      },
    );
  });
}

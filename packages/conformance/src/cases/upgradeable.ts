import {
  createUpgradeableReadWriteLock,
  InvalidArgumentError,
  LockLostError,
  LockTimeoutError,
} from '@lockkit/core';
import { describe, expect, it } from 'vitest';
import { abortedWithin, type Fixture, nextWaitFor, titled, track, yieldTurns } from '../support.js';

/**
 * Upgradeable read locks (docs/adr/0013): built in core from the backend's read-write lock
 * and a mutex, so they run on every backend.
 */
export function upgradeableCases(fx: Fixture, inspection: boolean): void {
  describe('upgradeable read locks', () => {
    it('an upgradeable reader shares with plain readers, excludes writers and other upgradeable readers', async () => {
      const name = fx.name('upgradeable-shares');
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const mine = createUpgradeableReadWriteLock(p1, name);
      const theirs = createUpgradeableReadWriteLock(p2, name);
      const upgradeable = await mine.acquireUpgradeableRead({ timeout: fx.ms(5000) });
      expect(upgradeable.kind).toBe('read');
      const reader = await theirs.tryAcquireRead();
      expect(reader).not.toBeNull();
      expect(await theirs.tryAcquireUpgradeableRead()).toBeNull();
      expect(await theirs.tryAcquireWrite()).toBeNull();
      expect(await reader!.release()).toBe(true);
      expect(await upgradeable.release()).toBe(true);
      const writer = await theirs.tryAcquireWrite();
      expect(writer?.kind).toBe('write');
      expect(await mine.tryAcquireRead()).toBeNull();
      expect(await mine.tryAcquireUpgradeableRead()).toBeNull();
      expect(await writer!.release()).toBe(true);
    });

    it('upgrade waits for the plain readers, and a writer waiting since before gets in only after', async () => {
      const name = fx.name('upgradeable-upgrade');
      const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
      const upgrader = createUpgradeableReadWriteLock(p1, name);
      const upgradeable = await upgrader.acquireUpgradeableRead({ timeout: fx.ms(5000) });
      const reader = await createUpgradeableReadWriteLock(p2, name).acquireRead();
      const writerWaits = nextWaitFor(name);
      const writer = track(
        createUpgradeableReadWriteLock(p3, name).acquireWrite({ timeout: fx.ms(30_000) }),
      );
      await writerWaits;
      const upgraded = track(upgradeable.upgrade({ timeout: fx.ms(30_000) }));
      await yieldTurns(50);
      expect(upgraded.settled).toBe(false); // the plain reader still holds
      await reader.release();
      const write = await upgraded.promise;
      expect(write.kind).toBe('write');
      expect(write.fencingToken).toBeGreaterThan(upgradeable.fencingToken);
      expect(write.signal.aborted).toBe(false);
      await yieldTurns(50);
      expect(writer.settled).toBe(false); // no writer got in between
      expect(await upgradeable.release()).toBe(true); // counts as released, changes nothing
      expect(await createUpgradeableReadWriteLock(p2, name).tryAcquireRead()).toBeNull();
      expect(await write.release()).toBe(true);
      const next = await writer.promise;
      expect(next.fencingToken).toBeGreaterThan(write.fencingToken);
      await next.release();
    }, 60_000);

    it('an upgrade that times out releases the upgradeable hold; bad upgrades are typed errors', async () => {
      const name = fx.name('upgradeable-timeout');
      const [p1, p2] = [await fx.provider(), await fx.provider()];
      const lock = createUpgradeableReadWriteLock(p1, name);
      const upgradeable = await lock.acquireUpgradeableRead({ timeout: fx.ms(5000) });
      const reader = await createUpgradeableReadWriteLock(p2, name).acquireRead();
      const failed = upgradeable.upgrade({ timeout: fx.ms(200) });
      await expect(failed).rejects.toThrow(LockTimeoutError);
      expect(upgradeable.validUntil).toBe(0);
      await expect(upgradeable.upgrade()).rejects.toThrow(InvalidArgumentError);
      // The gate is free again: another upgradeable reader gets in beside the plain reader.
      const again = await createUpgradeableReadWriteLock(p2, name).tryAcquireUpgradeableRead();
      expect(again).not.toBeNull();
      await again!.release();
      await reader.release();
      const write = await lock.acquireWrite({ timeout: fx.ms(5000) });
      await expect(
        (write as Awaited<ReturnType<typeof lock.acquireUpgradeableRead>>).upgrade(),
      ).rejects.toThrow(InvalidArgumentError);
      await write.release();
      const released = await lock.acquireUpgradeableRead({ timeout: fx.ms(5000) });
      await released.release();
      await expect(released.upgrade()).rejects.toThrow(InvalidArgumentError);
      await expect(released.upgrade({ timeout: -1 })).rejects.toThrow(InvalidArgumentError);
      expect(() => createUpgradeableReadWriteLock(p1, 42 as unknown as string)).toThrow(
        InvalidArgumentError,
      );
    }, 60_000);

    it.runIf(inspection)(
      titled(
        'forceRelease breaks an upgradeable reader and its gate, so a writer gets in',
        inspection ? undefined : 'capabilities.inspection is not true',
      ),
      async () => {
        const name = fx.name('upgradeable-force');
        const [p1, p2, p3] = [await fx.provider(), await fx.provider(), await fx.provider()];
        const bound = fx.ms(p1.capabilities.lostDetectionMs + 500);
        const hung = await createUpgradeableReadWriteLock(p1, name).acquireUpgradeableRead();
        expect(await createUpgradeableReadWriteLock(p2, name).forceRelease()).toBe(1);
        expect(LockLostError.isInstance(await abortedWithin(hung.signal, bound))).toBe(true);
        const writer = await createUpgradeableReadWriteLock(p3, name).acquireWrite({
          timeout: bound,
        });
        expect(writer.fencingToken).toBeGreaterThan(hung.fencingToken);
        expect(await hung.release()).toBe(false);
        expect(await writer.release()).toBe(true);
      },
      60_000,
    );
  });
}

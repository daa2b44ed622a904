/**
 * Upgradeable read locks (docs/adr/0013), built in core from two primitives every backend has:
 * the read-write lock `name` and the mutex `upgrade-gate:name` (the gate). Writers and the one
 * upgradeable reader take the gate first, so an upgrading reader can let go of its read hold
 * and wait for the write hold while no other writer can get in between.
 *
 * @module
 */
import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import { LockLostError } from './errors/lock-lost-error.js';
import { LockTimeoutError } from './errors/lock-timeout-error.js';
import { now } from './timing.js';
import type {
  AcquireOptions,
  IDistributedLock,
  ILockProvider,
  IReadWriteLock,
  LockHandle,
} from './types.js';
import { validateAcquireOptions, validateName } from './validation.js';

/** A read hold that can become the write hold with no other writer in between. */
export interface UpgradeableLockHandle extends LockHandle {
  /**
   * Waits (up to `timeout`, default forever; until `signal`) for the other readers to leave
   * and resolves the write hold; no other writer can be granted in between. This handle then
   * counts as released. If the upgrade fails (timeout, abort, outage), the upgradeable hold
   * is released too and the call rejects (`LockTimeoutError` on timeout, `LockLostError` when
   * the read hold had been lost). Calling it on a released, lost or already upgraded handle, or
   * on a write hold, is an `InvalidArgumentError`.
   */
  upgrade(options?: AcquireOptions): Promise<LockHandle>;
}

/**
 * A read-write lock with upgradeable reads. Plain readers share with each other and with the
 * one upgradeable reader; writers exclude everyone; two upgradeable readers exclude each
 * other (and writers wait for them).
 */
export interface IUpgradeableReadWriteLock extends IReadWriteLock {
  acquireUpgradeableRead(options?: AcquireOptions): Promise<UpgradeableLockHandle>;
  tryAcquireUpgradeableRead(options?: AcquireOptions): Promise<UpgradeableLockHandle | null>;
}

/** The gate mutex of the upgradeable read-write lock `name` (documented, like elections'). */
export function upgradeGateName(name: string): string {
  return `upgrade-gate:${name}`;
}

/**
 * The upgradeable read-write lock `name` on `provider` (any provider: it is built from the
 * provider's read-write lock `name` and its mutex `upgrade-gate:<name>`). Every client of
 * that lock must use this function: a plain `createReadWriteLock(name)` writer does not take
 * the gate and could get in during an upgrade.
 */
export function createUpgradeableReadWriteLock(
  provider: ILockProvider,
  name: string,
): IUpgradeableReadWriteLock {
  const valid = validateName(name);
  const rw = provider.createReadWriteLock(valid);
  const gate = provider.createLock(upgradeGateName(valid));
  const gated = (read: boolean, options: AcquireOptions | undefined, defaultTimeout: number) =>
    gatedHold(gate, rw, read, options, defaultTimeout);
  const acquireWrite = async (options?: AcquireOptions): Promise<LockHandle> =>
    (await gated(false, options, Number.POSITIVE_INFINITY)) ?? timeout(valid, options);
  const acquireUpgradeable = async (options?: AcquireOptions): Promise<UpgradeableLockHandle> =>
    (await gated(true, options, Number.POSITIVE_INFINITY)) ?? timeout(valid, options);
  return {
    name: valid,
    inspect: () => rw.inspect(),
    // The gate too: a hung upgradeable reader or writer would otherwise keep every writer out.
    forceRelease: async () => {
      const broken = await rw.forceRelease();
      await gate.forceRelease();
      return broken;
    },
    // Read holds are the read-write lock's own; gated holds cannot be exported.
    resume: (token) => rw.resume(token),
    acquireRead: (options) => rw.acquireRead(options),
    tryAcquireRead: (options) => rw.tryAcquireRead(options),
    withReadLock: (fn, options) => rw.withReadLock(fn, options),
    acquireWrite,
    tryAcquireWrite: (options) => gated(false, options, 0),
    withWriteLock: async (fn, options) => {
      const handle = await acquireWrite(options);
      try {
        return await fn(handle);
      } finally {
        await handle.release();
      }
    },
    acquireUpgradeableRead: acquireUpgradeable,
    tryAcquireUpgradeableRead: (options) => gated(true, options, 0),
  };
}

function timeout(name: string, options: AcquireOptions | undefined): never {
  throw new LockTimeoutError(name, options?.timeout ?? Number.POSITIVE_INFINITY);
}

/** Takes the gate, then the read or write hold in the time left; null on timeout. */
async function gatedHold(
  gate: IDistributedLock,
  rw: IReadWriteLock,
  read: boolean,
  options: AcquireOptions | undefined,
  defaultTimeout: number,
): Promise<UpgradeableHold | null> {
  const { timeoutMs, signal } = validateAcquireOptions(options, defaultTimeout);
  const deadline = now() + timeoutMs;
  // Lease options apply to both holds (each primitive checks them against its backend).
  const gateHandle = await gate.tryAcquire({ ...options, timeout: timeoutMs, signal });
  if (!gateHandle) return null;
  try {
    const rest = { ...options, timeout: Math.max(0, deadline - now()), signal };
    const held = await (read ? rw.tryAcquireRead(rest) : rw.tryAcquireWrite(rest));
    if (held) return new UpgradeableHold(rw, gateHandle, held);
  } catch (error) {
    await gateHandle.release();
    throw error;
  }
  await gateHandle.release();
  return null;
}

/**
 * A gated hold: the read (upgradeable) or write hold plus the gate. Its name, kind and token
 * are the read-write lock's; its signal aborts when either hold is lost.
 */
class UpgradeableHold implements UpgradeableLockHandle {
  readonly name: string;
  readonly kind: LockHandle['kind'];
  readonly fencingToken: bigint;
  readonly #rw: IReadWriteLock;
  readonly #gate: LockHandle;
  readonly #held: LockHandle;
  readonly #controller = new AbortController();
  readonly #unlink: () => void;
  #released: Promise<boolean> | undefined;
  #upgraded = false;

  constructor(rw: IReadWriteLock, gate: LockHandle, held: LockHandle) {
    this.#rw = rw;
    this.#gate = gate;
    this.#held = held;
    this.name = held.name;
    this.kind = held.kind;
    this.fencingToken = held.fencingToken;
    const onLost = (event: Event): void =>
      this.#controller.abort((event.target as AbortSignal).reason);
    for (const handle of [gate, held]) {
      if (handle.signal.aborted) this.#controller.abort(handle.signal.reason);
      handle.signal.addEventListener('abort', onLost, { once: true });
    }
    this.#unlink = () => {
      for (const handle of [gate, held]) handle.signal.removeEventListener('abort', onLost);
    };
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get validUntil(): number {
    return this.#released ? 0 : Math.min(this.#gate.validUntil, this.#held.validUntil);
  }

  async extend(ms?: number): Promise<boolean> {
    const results = await Promise.all([this.#gate.extend(ms), this.#held.extend(ms)]);
    return results.every(Boolean);
  }

  release(): Promise<boolean> {
    this.#released ??= this.#releaseBoth();
    return this.#released;
  }

  /** Two holds (the gate and the read or write one): not handed over as one. */
  export(): string {
    throw new InvalidArgumentError('An upgradeable read-write lock hold cannot be exported');
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release().then(() => undefined);
  }

  async upgrade(options?: AcquireOptions): Promise<LockHandle> {
    const { timeoutMs, signal } = validateAcquireOptions(options, Number.POSITIVE_INFINITY);
    if (this.kind !== 'read') throw new InvalidArgumentError('Only a read hold can be upgraded');
    if (this.#released || this.#upgraded || this.signal.aborted) {
      throw new InvalidArgumentError(
        `The upgradeable read hold of "${this.name}" was already released, lost or upgraded`,
      );
    }
    this.#upgraded = true;
    // Our own read hold would block the write hold: let go of it. The gate keeps every other
    // writer out until we have the write hold (or give up).
    const stillOurs = await this.#held.release();
    this.#unlink();
    this.#released = Promise.resolve(stillOurs);
    let write: LockHandle | null = null;
    try {
      if (stillOurs) {
        write = await this.#rw.tryAcquireWrite({ ...options, timeout: timeoutMs, signal });
      }
    } catch (error) {
      await this.#gate.release();
      throw error;
    }
    if (!write) {
      await this.#gate.release();
      if (!stillOurs) {
        throw new LockLostError(this.name, 'the read hold was lost before the upgrade');
      }
      throw new LockTimeoutError(this.name, timeoutMs);
    }
    return new UpgradeableHold(this.#rw, this.#gate, write);
  }

  async #releaseBoth(): Promise<boolean> {
    this.#unlink();
    const held = await this.#held.release();
    const gate = await this.#gate.release();
    return held && gate && !this.#controller.signal.aborted;
  }
}

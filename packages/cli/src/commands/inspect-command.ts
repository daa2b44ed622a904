import { createLockProvider, type ILockProvider, type LockState, redactUrl } from 'lockkit';
import { exitCodes } from '../exit-codes.js';
import { describeTarget, formatState, stateJson } from '../inspect/lock-state-report.js';
import type { ForceReleaseCommand, InspectCommand, LockTarget } from '../invocation.js';
import type { Output } from '../output.js';
import { UsageError } from '../usage-error.js';

/** `lockkit inspect`: prints who holds the lock, through the backend's `inspect()`. Only reads. */
export async function inspectCommand(inspect: InspectCommand, output: Output): Promise<number> {
  const provider = await createLockProvider(inspect.url);
  try {
    const state = await administered(provider, inspect.name, inspect.target).inspect();
    report(output, provider, inspect, state);
    return exitCodes.ok;
  } finally {
    await provider.close();
  }
}

/**
 * `lockkit force-release`: breaks every current hold of the lock (an operator's break), only
 * with `--yes`. Prints what it breaks first.
 */
export async function forceReleaseCommand(
  command: ForceReleaseCommand,
  output: Output,
): Promise<number> {
  const lock = describeTarget(command.name, command.target);
  if (!command.yes) {
    throw new UsageError(
      `force-release breaks every current hold of ${lock}: each holder loses it (its signal ` +
        'aborts, its work should stop) and the next waiter is granted. Run ' +
        `'lockkit inspect' to see the holders, then add --yes to break them.`,
    );
  }
  const provider = await createLockProvider(command.url);
  try {
    const primitive = administered(provider, command.name, command.target);
    const before = await primitive.inspect();
    if (!command.json) report(output, provider, command, before);
    const broken = await primitive.forceRelease();
    if (command.json) {
      output.print(JSON.stringify({ url: redactUrl(command.url), lock, broken }));
    } else {
      output.print(`broke ${broken} ${broken === 1 ? 'hold' : 'holds'} of ${lock}`);
    }
    return exitCodes.ok;
  } finally {
    await provider.close();
  }
}

function report(
  output: Output,
  provider: ILockProvider,
  command: InspectCommand | ForceReleaseCommand,
  state: LockState,
): void {
  const lock = describeTarget(command.name, command.target);
  const url = redactUrl(command.url);
  if (command.json) {
    output.print(stateJson(state, lock, url, provider.backend));
    return;
  }
  const where = `${url} (${provider.backend} backend)`;
  for (const line of formatState(state, lock, where, Date.now())) output.print(line);
}

/** The primitive `target` names: `--shared`/`--exclusive` both mean the read-write lock. */
function administered(
  provider: ILockProvider,
  name: string,
  target: LockTarget,
): { inspect(): Promise<LockState>; forceRelease(): Promise<number> } {
  if (target.kind === 'mutex') return provider.createLock(name);
  if (target.kind === 'semaphore') return provider.createSemaphore(name, target.maxCount);
  return provider.createReadWriteLock(name);
}

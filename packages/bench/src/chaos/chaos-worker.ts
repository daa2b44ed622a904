/**
 * A chaos worker process: one provider, one loop per lock (RW lock, semaphore, election) name; every critical
 * section (or leader's term) reports to the orchestrator's fenced checker. Started by worker-pool.ts with its
 * {@link WorkerConfig} as JSON in argv[2] and an IPC channel (advanced serialization).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  AcquireOptions,
  ILockProvider,
  Leadership,
  LockHandle,
  LockKind,
} from '@lockkit/core';
import { createProvider } from '../backends/provider-factory.js';
import { monotonicMs } from '../support/monotonic-clock.js';
import type { OrchestratorMessage, WorkerConfig, WorkerReport } from './chaos-messages.js';
import { connectProvider } from './worker-connect.js';

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const stopping = new AbortController();
const pendingAcks = new Map<number, (accepted: boolean) => void>();
let nextId = 1;
let nextGrant = 1;

function send(report: WorkerReport): void {
  if (!process.connected) return;
  process.send?.(report, undefined, undefined, () => {
    // The orchestrator is gone or the channel closed: 'disconnect' ends this process.
  });
}

function fatal(kind: string, error: unknown): void {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  send({ type: 'fatal', at: monotonicMs(), message: `${kind}: ${text}` });
  setTimeout(() => process.exit(70), 50);
}

process.on('uncaughtException', (error) => fatal('uncaught exception', error));
process.on('unhandledRejection', (reason) => fatal('unhandled rejection', reason));
process.on('disconnect', () => process.exit(0));
process.on('message', (message: OrchestratorMessage) => {
  if (message.type === 'ack') {
    pendingAcks.get(message.id)?.(message.accepted);
    pendingAcks.delete(message.id);
  } else if (message.type === 'stop') {
    stopping.abort();
  }
});

/** Who writes: a lock (its name and token) or a leader (its election's name and epoch). */
interface Writer {
  readonly name: string;
  readonly token: bigint;
  readonly kind: LockKind;
}

/** A fenced write: resolves whether the checker accepted it. */
function fencedWrite(
  type: 'enter' | 'write',
  writer: Writer,
  grant: number,
  at: number,
  aborted: boolean,
  requestedAt?: number,
): Promise<boolean> {
  const id = nextId++;
  const accepted = new Promise<boolean>((resolve) => pendingAcks.set(id, resolve));
  const fields = {
    id,
    lock: writer.name,
    grant,
    token: writer.token,
    kind: writer.kind,
    at,
    aborted,
  };
  send(requestedAt === undefined ? { type, ...fields } : { type, ...fields, requestedAt });
  return accepted;
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.name : typeof error;
}

async function criticalSection(handle: LockHandle, requestedAt: number): Promise<void> {
  // The grant's first statement: clock and signal read in one synchronous step.
  const acquiredAt = monotonicMs();
  const abortedAtGrant = handle.signal.aborted;
  const grant = nextGrant++;
  const fields = { lock: handle.name, grant, token: handle.fencingToken, kind: handle.kind };
  const onLost = (): void => {
    const reason = handle.signal.reason as { message?: unknown } | undefined;
    send({ type: 'lost', ...fields, at: monotonicMs(), reason: String(reason?.message ?? reason) });
  };
  if (handle.signal.aborted) onLost();
  else handle.signal.addEventListener('abort', onLost, { once: true });
  const writer = { name: handle.name, token: handle.fencingToken, kind: handle.kind };
  await fencedWrite('enter', writer, grant, acquiredAt, abortedAtGrant, requestedAt);
  await sleep(config.holdMs / 2);
  {
    const at = monotonicMs();
    const aborted = handle.signal.aborted;
    await fencedWrite('write', writer, grant, at, aborted);
  }
  await sleep(config.holdMs / 2);
  const exitAt = monotonicMs();
  const exitAborted = handle.signal.aborted;
  send({ type: 'exit', ...fields, at: exitAt, aborted: exitAborted });
  try {
    const result = await handle.release();
    send({ type: 'released', ...fields, at: monotonicMs(), result });
  } catch (error) {
    send({ type: 'released', ...fields, at: monotonicMs(), result: 'threw', error: String(error) });
  }
}

/** One acquire of the scenario's primitive named `name` (an RW lock: a read or a write). */
type Acquire = (options: AcquireOptions) => Promise<LockHandle>;

function acquirerOf(provider: ILockProvider, name: string): Acquire {
  if (config.scenario === 'rwlock') {
    const lock = provider.createReadWriteLock(name);
    return (options) =>
      Math.random() < config.writeShare ? lock.acquireWrite(options) : lock.acquireRead(options);
  }
  if (config.scenario === 'semaphore') {
    const semaphore = provider.createSemaphore(name, config.maxCount);
    return (options) => semaphore.acquire(options);
  }
  const lock = provider.createLock(name);
  return (options) => lock.acquire(options);
}

async function hammer(provider: ILockProvider, name: string): Promise<void> {
  const acquire = acquirerOf(provider, name);
  while (!stopping.signal.aborted) {
    let handle: LockHandle;
    const requestedAt = monotonicMs();
    try {
      handle = await acquire({ timeout: config.acquireTimeoutMs, signal: stopping.signal });
    } catch (error) {
      if (stopping.signal.aborted) break;
      send({
        type: 'acquire-error',
        lock: name,
        at: monotonicMs(),
        code: errorCode(error),
        message: error instanceof Error ? error.message : String(error),
      });
      await sleep(100 + Math.random() * 100);
      continue;
    }
    await criticalSection(handle, requestedAt);
    await sleep(Math.random() * config.thinkMaxMs);
  }
}

/**
 * A leader's term: its claim (the `enter` write, with the epoch, at once), then up to
 * `termWrites` units of work, each started only while the signal is not aborted and
 * committed with a fenced write when done (2 ms later) even if the signal fired meanwhile —
 * a leader that checks its signal, as it should, and still has work in flight when it loses
 * (after a SIGSTOP, its in-flight unit commits before the lease check runs). Then it resigns.
 */
async function leaderTerm(
  leadership: Leadership,
  name: string,
  requestedAt: number,
): Promise<void> {
  const acquiredAt = monotonicMs();
  const abortedAtGrant = leadership.signal.aborted;
  const grant = nextGrant++;
  const writer = { name, token: leadership.epoch, kind: 'mutex' as const };
  const fields = { lock: name, grant, token: leadership.epoch };
  const onLost = (): void => {
    const reason = leadership.signal.reason as { message?: unknown } | undefined;
    send({ type: 'lost', ...fields, at: monotonicMs(), reason: String(reason?.message ?? reason) });
  };
  if (leadership.signal.aborted) onLost();
  else leadership.signal.addEventListener('abort', onLost, { once: true });
  // The claim is not awaited before the first unit starts (its write follows it in order).
  const claimed = fencedWrite('enter', writer, grant, acquiredAt, abortedAtGrant, requestedAt);
  for (let unit = 0; unit < config.termWrites; unit++) {
    if (leadership.signal.aborted) break; // no new work once the term is over
    await sleep(config.holdMs / 2);
    const at = monotonicMs();
    const aborted = leadership.signal.aborted;
    await fencedWrite('write', writer, grant, at, aborted);
  }
  await claimed;
  const exitAt = monotonicMs();
  send({ type: 'exit', ...fields, at: exitAt, aborted: leadership.signal.aborted });
  leadership.signal.removeEventListener('abort', onLost); // resigning is not a loss
  await leadership.resign();
  send({ type: 'released', ...fields, at: monotonicMs(), result: 'resigned' });
}

/**
 * Campaigns in election `name` through `events()` with `recampaign` (a lost term is followed
 * by a new campaign inside the iteration); a resign ends the iteration, and the worker
 * stands again after its think time.
 */
async function campaign(provider: ILockProvider, name: string): Promise<void> {
  const election = provider.createElection(name, {
    owner: `worker-${process.pid}`,
    recampaign: true,
  });
  while (!stopping.signal.aborted) {
    let requestedAt = monotonicMs();
    try {
      for await (const event of election.events({ signal: stopping.signal })) {
        if (event.type === 'elected') await leaderTerm(event.leadership, name, requestedAt);
        else requestedAt = monotonicMs();
      }
    } catch (error) {
      send({
        type: 'acquire-error',
        lock: name,
        at: monotonicMs(),
        code: errorCode(error),
        message: error instanceof Error ? error.message : String(error),
      });
      await sleep(100 + Math.random() * 100);
    }
    await sleep(Math.random() * config.thinkMaxMs);
  }
}

async function main(): Promise<void> {
  const provider = await createProvider(config.spec);
  await connectProvider(provider, 10_000);
  const { lostDetectionMs, abandonedReleaseMs, leases } = provider.capabilities;
  send({ type: 'ready', bounds: { lostDetectionMs, abandonedReleaseMs, leases } });
  const loop = config.scenario === 'election' ? campaign : hammer;
  await Promise.all(config.locks.map((name) => loop(provider, name)));
  await Promise.race([provider.close(), sleep(5000)]);
  send({ type: 'done' });
  setTimeout(() => process.exit(0), 20);
}

main().catch((error: unknown) => fatal('worker failed', error));

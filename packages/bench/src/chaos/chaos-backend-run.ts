import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BackendId } from '../backends/backend-ids.js';
import type { Lab } from '../backends/lab.js';
import { topologyOf } from '../backends/redis-topologies.js';
import type { FaultSet } from '../support/command-line.js';
import { monotonicMs } from '../support/monotonic-clock.js';
import { SeededRandom } from '../support/seeded-random.js';
import { analyseRun } from './chaos-analysis.js';
import { injectClockFault, isClockFault } from './chaos-clock-faults.js';
import { type FaultContext, injectFault } from './chaos-faults.js';
import { ChaosLedger } from './chaos-ledger.js';
import type { ChaosScenario, WorkerConfig } from './chaos-messages.js';
import { injectNetworkFault, isNetworkFault } from './chaos-network-faults.js';
import type { BackendChaosResult } from './chaos-result.js';
import type { FaultWindow } from './fault-kinds.js';
import { faultPlan } from './fault-plan.js';
import { placeWorkers } from './worker-placement.js';
import { WorkerPool } from './worker-pool.js';

/** How one backend's chaos run goes. */
export interface ChaosRunOptions {
  readonly scenario: ChaosScenario;
  /** `network`: workers in namespaces, partition/loss/delay faults (see chaos-network.ts). */
  readonly faults?: FaultSet | undefined;
  readonly quick: boolean;
  readonly seed: number;
  /** Rounds of the fault plan (ignored with `quick`). */
  readonly cycles: number;
  readonly verbose: boolean;
  /** Directory to write the raw ledger and fault log to, as `<backend>.json`. */
  readonly dump: string | undefined;
  readonly log: (line: string) => void;
}

/** Per scenario: worker processes, locks (or elections), and how a critical section goes. */
const shapes = {
  mutex: { workers: 4, locks: 3, holdMs: 4, termWrites: 0, writeShare: 0, maxCount: 1 },
  // A term: the claim, then 8 writes 2 ms apart, then resign.
  election: { workers: 3, locks: 2, holdMs: 4, termWrites: 8, writeShare: 0, maxCount: 1 },
  // A quarter of the grants are writes: readers overlap, and writers have to wait for them.
  rwlock: { workers: 4, locks: 2, holdMs: 6, termWrites: 0, writeShare: 0.25, maxCount: 1 },
  // 5 workers on semaphores of 2: always some waiting.
  semaphore: { workers: 5, locks: 2, holdMs: 6, termWrites: 0, writeShare: 0, maxCount: 2 },
} as const;

/** Lock names of a scenario start with this, so that a dump tells them apart. */
const namePrefix = { mutex: '', election: 'leader-', rwlock: 'rw-', semaphore: 'sem-' } as const;

/** Waits until every lock has been granted after `since`, or `limitMs` passed. */
async function awaitRecovery(
  ledger: ChaosLedger,
  locks: readonly string[],
  since: number,
  limitMs: number,
): Promise<void> {
  const deadline = since + limitMs;
  while (monotonicMs() < deadline) {
    if (locks.every((lock) => ledger.firstGrantAfter(lock, since) !== undefined)) return;
    await sleep(20);
  }
}

/**
 * One backend, one scenario: worker processes hammer 3 mutexes (or 2 RW locks, 2 semaphores;
 * or campaign in 2 elections)
 * while the planned faults are injected one after another (each followed by a wait for every
 * lock to be granted again); then the workers stop and the ledger is analysed.
 */
export async function runChaosBackend(
  backend: BackendId,
  lab: Lab,
  options: ChaosRunOptions,
): Promise<BackendChaosResult> {
  const { scenario } = options;
  const shape = shapes[scenario];
  const workerCount = shape.workers;
  const runId = randomUUID().slice(0, 8);
  const prefix = namePrefix[scenario];
  const locks = Array.from(
    { length: shape.locks },
    (_, index) => `chaos/${runId}/${prefix}${'abc'[index]}`,
  );
  const config: WorkerConfig = {
    spec: lab.specFor(backend, 'chaos'),
    scenario,
    locks,
    holdMs: shape.holdMs,
    thinkMaxMs: 4,
    acquireTimeoutMs: 5000,
    termWrites: shape.termWrites,
    writeShare: shape.writeShare,
    maxCount: shape.maxCount,
  };
  const ledger = new ChaosLedger({ capacity: shape.maxCount });
  const random = new SeededRandom(options.seed);
  const faults: FaultWindow[] = [];
  const skipped: string[] = [];
  const placed = await placeWorkers(options.faults, config, lab, backend, workerCount, options.log);
  const pool = new WorkerPool(config, ledger, options.verbose, placed.placement);
  const replacements: Promise<unknown>[] = [];
  let workersStarted = 0;
  const startedAt = monotonicMs();
  const budgetMs = options.quick ? 45_000 : 30 * 60_000;
  try {
    await Promise.all(Array.from({ length: workerCount }, () => pool.spawn()));
    workersStarted = workerCount;
    options.log(
      `${backend} (${scenario}): ${workerCount} workers ready, bounds ${JSON.stringify(pool.bounds)}`,
    );
    await sleep(scenario === 'election' ? 300 : 1000);
    const context: FaultContext = {
      pool,
      ledger,
      servers: lab.serversOf(backend),
      bounds: pool.bounds,
      random,
      network: placed.network,
      serverClock: lab.serverClockOf(backend),
      topologies: topologyOf(backend, lab.topologies),
      locks,
      replaceWorker: () => {
        workersStarted += 1;
        replacements.push(
          pool.spawn().catch((error: unknown) => {
            ledger.markCrashed(0, `replacement worker failed to start: ${String(error)}`);
          }),
        );
      },
    };
    const plan =
      placed.plan(random, options.quick, options.cycles, skipped) ??
      faultPlan(backend, options.quick, options.cycles, random, scenario);
    for (const [index, kind] of plan.entries()) {
      if (monotonicMs() - startedAt > budgetMs) {
        skipped.push(...plan.slice(index).map((rest) => `${rest} (time budget)`));
        break;
      }
      if (pool.running().length === 0) {
        skipped.push(`${kind} (no running worker)`);
        continue;
      }
      const fault = isNetworkFault(kind)
        ? await injectNetworkFault(kind, context)
        : isClockFault(kind)
          ? await injectClockFault(kind, context)
          : await injectFault(kind, context);
      faults.push(fault);
      await awaitRecovery(ledger, locks, fault.clearedAt, fault.recoveryBoundMs + 2000);
      options.log(
        `${backend} (${scenario}): ${kind} done (${Math.round(fault.clearedAt - fault.startedAt)} ms): ${fault.description}`,
      );
      await sleep(300);
    }
    await Promise.all(replacements);
    await sleep(500);
  } finally {
    await Promise.allSettled(replacements);
    await pool.close();
    await placed.network?.close();
  }
  if (options.dump !== undefined) {
    mkdirSync(options.dump, { recursive: true });
    const json = JSON.stringify(
      {
        backend,
        bounds: pool.bounds,
        startedAt,
        locks,
        faults,
        killedAt: Object.fromEntries(ledger.killedAt),
        failures: ledger.failures,
        grants: [...ledger.grants.values()],
      },
      (_, value: unknown) => (typeof value === 'bigint' ? value.toString() : value),
      1,
    );
    const file = scenario === 'mutex' ? `${backend}.json` : `${backend}-${scenario}.json`;
    writeFileSync(join(options.dump, file), json);
  }
  return analyseRun({
    backend,
    scenario,
    ledger,
    faults,
    bounds: pool.bounds,
    locks,
    startedAt,
    endedAt: monotonicMs(),
    workersStarted,
    skipped,
  });
}

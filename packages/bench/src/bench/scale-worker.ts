/**
 * A worker process of the 64-worker row (`measure-processes.ts`): opens its clients of one
 * contender, says `ready`, and on `go` loops on one lock like the 8-worker row (acquire,
 * hold 1 ms, release, think 1 ms) for the given time, then reports each worker's count.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProviderSpec } from '../backends/provider-spec.js';
import { contendersOn } from './bench-run.js';
import type { LockClient } from './contender.js';

/** What the parent sends first. */
export interface ScaleWorkerJob {
  readonly spec: ProviderSpec;
  readonly directory: string;
  readonly library: string;
  readonly workers: number;
  readonly durationMs: number;
  readonly name: string;
}

/** What a worker process reports. */
export type ScaleWorkerReply =
  | { readonly type: 'ready' }
  | { readonly type: 'done'; readonly perWorker: number[]; readonly elapsedMs: number }
  | { readonly type: 'failed'; readonly message: string };

function send(reply: ScaleWorkerReply): void {
  process.send?.(reply);
}

async function run(job: ScaleWorkerJob): Promise<void> {
  const contender = contendersOn(job.spec, job.directory).find(
    (candidate) => candidate.library === job.library && candidate.uncontendedOnly !== true,
  );
  if (!contender) throw new Error(`no contender "${job.library}" on ${job.spec.backend}`);
  const clients: LockClient[] = await Promise.all(
    Array.from({ length: job.workers }, () => contender.open()),
  );
  try {
    const go = new Promise<void>((resolve) => {
      process.once('message', () => resolve());
    });
    send({ type: 'ready' });
    await go;
    const perWorker = clients.map(() => 0);
    const started = performance.now();
    const stopAt = started + job.durationMs;
    await Promise.all(
      clients.map(async (client, worker) => {
        while (performance.now() < stopAt) {
          const release = await client.acquire(job.name);
          await sleep(1);
          await release();
          perWorker[worker] = (perWorker[worker] ?? 0) + 1;
          await sleep(1);
        }
      }),
    );
    send({ type: 'done', perWorker, elapsedMs: performance.now() - started });
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
  }
}

process.once('message', (job: ScaleWorkerJob) => {
  run(job).then(
    () => process.disconnect?.(),
    (error: unknown) => {
      send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
      process.disconnect?.();
    },
  );
});

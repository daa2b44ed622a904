/**
 * `pnpm --filter @lockkit/bench handoff-timeline [--quick] [--backends zookeeper,postgres]` —
 * where a hand-off's time goes: per waiting contender (lockkit's default row and the raw
 * recipes), the time from the holder's release call to (a) the release returning and (b) the
 * waiter holding the lock, p50 over interleaved rounds (one hand-off per contender per round,
 * in rotated order), on the bench's durable servers. On ZooKeeper, lockkit's row also has
 * (c) the waiter's predecessor watch firing (`lockkit:zookeeper:watch`), which splits the
 * hand-off into the server's part and the waiter's. Prints only.
 */
import diagnostics from 'node:diagnostics_channel';
import { setTimeout as sleep } from 'node:timers/promises';
import { zookeeperChannelNames } from '@lockkit/zookeeper';
import { startLab } from '../backends/lab.js';
import { parseCommandLine } from '../support/command-line.js';
import { runMain } from '../support/run-main.js';
import { median } from '../support/statistics.js';
import { contendersFor } from './bench-run.js';
import { milliseconds } from './bench-table.js';
import type { Contender, LockClient } from './contender.js';

/** When lockkit's last predecessor watch on ZooKeeper fired (performance.now() ms). */
let watchFiredAt = Number.NaN;
diagnostics.subscribe(zookeeperChannelNames.watch, (message) => {
  if ((message as { purpose?: string }).purpose === 'predecessor') watchFiredAt = performance.now();
});

interface Timeline {
  readonly returned: number[];
  readonly watch: number[];
  readonly granted: number[];
}

const emptyTimeline = (): Timeline => ({ returned: [], watch: [], granted: [] });

/** One hand-off between `holder` and `waiter`, timed from the release call. */
async function handOff(holder: LockClient, waiter: LockClient, name: string, into: Timeline) {
  const release = await holder.acquire(name);
  const granted = waiter.acquire(name).then((next) => ({ next, at: performance.now() }));
  await sleep(10 + Math.random() * 20); // the waiter settles into its wait
  watchFiredAt = Number.NaN;
  const releasedAt = performance.now();
  await release();
  into.returned.push(performance.now() - releasedAt);
  const { next, at } = await granted;
  into.granted.push(at - releasedAt);
  if (!Number.isNaN(watchFiredAt)) into.watch.push(watchFiredAt - releasedAt);
  await next();
}

const ms = (values: readonly number[]): string =>
  values.length === 0 ? '—' : `${milliseconds(median(values))} ms`;

async function main(): Promise<void> {
  const options = parseCommandLine(process.argv.slice(2));
  const chosen = process.argv.some((argument) => argument.startsWith('--backends'));
  const backends = chosen ? options.backends : (['zookeeper'] as const);
  const rounds = options.quick ? 20 : 200;
  const lab = await startLab(backends, 'bench');
  try {
    for (const backend of backends) {
      const contenders: Contender[] = contendersFor(backend, lab).filter(
        (contender) => contender.waits === true && !contender.uncontendedOnly && !contender.variant,
      );
      const pairs = await Promise.all(
        contenders.map(async (contender) => [await contender.open(), await contender.open()]),
      );
      const timelines = contenders.map(emptyTimeline);
      try {
        for (let round = -5; round < rounds; round++) {
          for (let turn = 0; turn < contenders.length; turn++) {
            const index = (turn + Math.max(0, round)) % contenders.length;
            const [holder, waiter] = pairs[index] as [LockClient, LockClient];
            const into = (round < 0 ? undefined : timelines[index]) ?? emptyTimeline(); // warm-up: dropped
            await handOff(holder, waiter, `timeline:${index}`, into);
          }
        }
      } finally {
        await Promise.allSettled(pairs.flat().map((client) => client.close()));
      }
      console.log(
        `\n${backend}: hand-off timeline, p50 of ${rounds} interleaved rounds, from the release call`,
      );
      console.log('| contender | release returns | predecessor watch fires | waiter holds |');
      console.log('| --- | ---: | ---: | ---: |');
      contenders.forEach((contender, index) => {
        const timeline = timelines[index] as Timeline;
        console.log(
          `| ${contender.library} | ${ms(timeline.returned)} | ${ms(timeline.watch)} | ${ms(timeline.granted)} |`,
        );
      });
    }
  } finally {
    await lab.stop();
  }
}

runMain(main);

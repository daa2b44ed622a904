/**
 * `pnpm --filter @lockkit/bench redis-costs [--quick] [--backends redis,redlock]` — where the
 * time of an uncontended Redis acquire + release goes: the cost ladder of redis-ladder.ts (a
 * bare SET NX PX loop, then one guarantee of lockkit's added per rung, then lockkit's key
 * names, on Redlock its release's fence floor, then lockkit's backend called without its
 * provider) and lockkit itself through its
 * provider, with and without the inspection record, beside the peer libraries
 * (redlock, redis-semaphore). Interleaved slices as in
 * `pnpm bench`, repeated (3 runs, 1 with --quick) for the run-to-run spread; then, one
 * contender at a time, the Redis servers' own CPU time per cycle (INFO cpu, all nodes).
 * Prints only.
 */
import { Redis } from 'ioredis';
import type { BackendId } from '../backends/backend-ids.js';
import { startLab } from '../backends/lab.js';
import { parseCommandLine } from '../support/command-line.js';
import { runMain } from '../support/run-main.js';
import { median } from '../support/statistics.js';
import { integer, percent, spread } from './bench-table.js';
import type { Contender } from './contender.js';
import { measureUncontended } from './measure-uncontended.js';
import { lockkitContender } from './peers/lockkit-contender.js';
import { redisPeers } from './peers/redis-peers.js';
import { redisLadder } from './redis-ladder.js';

const measured: readonly BackendId[] = ['redis', 'redlock'];

/** The servers' CPU time (user + system, µs), summed over `nodes`. */
async function serverCpuMicros(nodes: readonly Redis[]): Promise<number> {
  let total = 0;
  for (const node of nodes) {
    const info = await node.info('cpu');
    for (const field of ['used_cpu_user', 'used_cpu_sys']) {
      total += Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN) * 1e6;
    }
  }
  return total;
}

/** Server CPU µs per acquire + release of `contender`, run alone for `cycles`. */
async function serverCost(contender: Contender, urls: readonly string[], cycles: number) {
  const nodes = urls.map((url) => new Redis(url));
  const client = await contender.open();
  try {
    for (let i = 0; i < 200; i++) await (await client.acquire('costs:warm'))();
    const before = await serverCpuMicros(nodes);
    for (let i = 0; i < cycles; i++) await (await client.acquire('costs:server'))();
    return ((await serverCpuMicros(nodes)) - before) / cycles;
  } finally {
    await client.close();
    for (const node of nodes) node.disconnect();
  }
}

async function main(): Promise<void> {
  const options = parseCommandLine(process.argv.slice(2));
  const backends = options.backends.filter((backend) => measured.includes(backend));
  const [runs, slices, cycles] = options.quick ? [1, 10, 1000] : [3, 60, 5000];
  const lab = await startLab(backends, 'counts');
  try {
    for (const backend of backends) {
      const spec = lab.specFor(backend, 'default');
      const contenders = [
        ...redisLadder(backend, spec.urls),
        lockkitContender(spec, { recordHolds: false }),
        lockkitContender(spec),
        ...redisPeers(backend, spec.urls).filter((peer) => peer.waits === true),
      ];
      const rates: number[][] = contenders.map(() => []);
      const clientCpu: number[][] = contenders.map(() => []);
      /** Per run, each contender's rate over the bare loop's (the first rung). */
      const ratios: number[][] = contenders.map(() => []);
      for (let run = 0; run < runs; run++) {
        console.error(`[redis-costs] ${backend}: run ${run + 1} of ${runs}`);
        const result = await measureUncontended(contenders, slices, 30);
        const failed = result.errors.find((error) => error !== undefined);
        if (failed) throw new Error(`${backend}: ${failed}`);
        const base = result.rates[0] ?? Number.NaN;
        result.rates.forEach((rate, index) => {
          rates[index]?.push(rate);
          clientCpu[index]?.push(result.cpuMicros[index] ?? Number.NaN);
          ratios[index]?.push(rate / base);
        });
      }
      const serverCpu: number[] = [];
      for (const contender of contenders)
        serverCpu.push(await serverCost(contender, spec.urls, cycles));
      console.log(
        `\n${backend} (${spec.urls.length} node${spec.urls.length > 1 ? 's' : ''}), uncontended acquire + release, ${runs} interleaved run(s)`,
      );
      console.log(
        '| client | cycles/s | of the bare loop (runs min–max) | client CPU µs | server CPU µs |',
      );
      console.log('|---|--:|--:|--:|--:|');
      contenders.forEach((contender, index) => {
        const ratio = ratios[index] ?? [];
        console.log(
          `| ${contender.library} | ${integer(median(rates[index] ?? []))} | ${percent(median(ratio))}${spread(ratio, percent)} | ${integer(median(clientCpu[index] ?? []))} | ${(serverCpu[index] ?? Number.NaN).toFixed(1)} |`,
        );
      });
    }
  } finally {
    await lab.stop();
  }
}

runMain(main);

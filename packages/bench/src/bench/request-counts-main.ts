/**
 * `pnpm --filter @lockkit/bench requests [--quick] [--backends postgres,mysql,zookeeper]` —
 * what each waiting contender asks the server per critical section, uncontended and with 8
 * workers on one lock, counted by the server itself (`pg_stat_statements`, MariaDB
 * `Com_*`/`Questions`, ZooKeeper `mntr` packets). Prints only.
 */
import type { BackendId } from '../backends/backend-ids.js';
import { startLab } from '../backends/lab.js';
import { parseCommandLine } from '../support/command-line.js';
import { runMain } from '../support/run-main.js';
import { contendersFor } from './bench-run.js';
import type { Contender } from './contender.js';
import { measureWorkers } from './measure-workers.js';
import {
  type CounterSource,
  type Counters,
  mysqlCounters,
  mysqlReadCost,
  perSection,
  postgresCounters,
  zookeeperCounters,
} from './server-counters.js';

const counted: readonly BackendId[] = ['postgres', 'mysql', 'zookeeper'];
/** What one read of the counters adds to them (subtracted). */
const readCost: Partial<Record<BackendId, Counters>> = { mysql: mysqlReadCost };

function print(title: string, rows: [string, number][]): void {
  const total = rows.find(([key]) => key === 'Questions')?.[1];
  console.log(`  ${title}${total === undefined ? '' : ` (Questions ${total.toFixed(2)})`}`);
  for (const [key, value] of rows) {
    if (key !== 'Questions') console.log(`    ${value.toFixed(2).padStart(7)}  ${key}`);
  }
}

async function count(contender: Contender, source: CounterSource, cycles: number, ms: number) {
  const skip = readCost[contender.backend];
  const client = await contender.open();
  try {
    for (let i = 0; i < 20; i++) await (await client.acquire('counts:warm'))();
    const before = await source.read();
    for (let i = 0; i < cycles; i++) await (await client.acquire('counts:uncontended'))();
    print(
      'uncontended, per acquire + release',
      perSection(before, await source.read(), cycles, skip),
    );
  } finally {
    await client.close();
  }
  const before = await source.read();
  const workers = await measureWorkers(contender, ms);
  const sections = workers.perWorker.reduce((sum, n) => sum + n, 0);
  const rows = perSection(before, await source.read(), sections, skip);
  print(`8 workers, ${workers.perSecond.toFixed(0)}/s, per critical section`, rows);
}

async function main(): Promise<void> {
  const options = parseCommandLine(process.argv.slice(2));
  const backends = options.backends.filter((backend) => counted.includes(backend));
  const [cycles, ms] = options.quick ? [100, 500] : [1000, 3000];
  const lab = await startLab(backends, 'counts');
  try {
    for (const backend of backends) {
      const server = lab.serversOf(backend)[0];
      if (!server) continue;
      const source =
        backend === 'postgres'
          ? await postgresCounters(server.url)
          : backend === 'mysql'
            ? await mysqlCounters(server.url)
            : zookeeperCounters(server);
      try {
        for (const contender of contendersFor(backend, lab)) {
          if (contender.uncontendedOnly || contender.waits !== true) continue;
          console.log(`${backend}: ${contender.library}`);
          await count(contender, source, cycles, ms);
        }
      } finally {
        await source.close();
      }
    }
  } finally {
    await lab.stop();
  }
}

runMain(main);

import { type BackendId, isTopologyBackend } from '../backends/backend-ids.js';
import type { Lab } from '../backends/lab.js';
import type { ProviderSpec, ProviderVariant } from '../backends/provider-spec.js';
import { quantile } from '../support/statistics.js';
import type { ContenderResult, HandoffResult } from './bench-result.js';
import type { BenchSettings } from './bench-settings.js';
import type { Contender } from './contender.js';
import { measureHandoff } from './measure-handoff.js';
import { type HeldResult, measureHeld } from './measure-held.js';
import { measureUncontended } from './measure-uncontended.js';
import { measureWorkers, type WorkersResult } from './measure-workers.js';
import { etcdPeers } from './peers/etcd-peers.js';
import { filePeers } from './peers/file-peers.js';
import { lockkitContender } from './peers/lockkit-contender.js';
import { lockkitOtelContender } from './peers/lockkit-otel-contender.js';
import { mysqlPeers } from './peers/mysql-peers.js';
import { postgresPeers } from './peers/postgres-peers.js';
import { redisPeers } from './peers/redis-peers.js';
import { zookeeperPeers } from './peers/zookeeper-peers.js';

/** lockkit (plain, then with OpenTelemetry on) and its peers on one backend of `lab`. */
export function contendersFor(backend: BackendId, lab: Lab): Contender[] {
  return contendersOn(lab.specFor(backend, 'default'), lab.directory);
}

/**
 * The contenders on the servers of `spec` (`directory`: the lab's, for the file peers):
 * plain data, so a worker process builds the same ones.
 */
export function contendersOn(spec: ProviderSpec, directory: string): Contender[] {
  const { backend } = spec;
  const url = spec.urls[0] ?? '';
  const peers: Record<BackendId, () => Contender[]> = {
    redis: () => redisPeers(backend, spec.urls),
    redlock: () => redisPeers(backend, spec.urls),
    postgres: () => postgresPeers(url),
    mysql: () => mysqlPeers(url),
    zookeeper: () => zookeeperPeers(url),
    etcd: () => etcdPeers(url),
    file: () => filePeers(directory),
    // lockkit alone: the peers take one node or independent nodes, not a topology URL.
    'redis-cluster': () => [],
    'redis-cluster-ack': () => [],
    'redis-sentinel': () => [],
    'redis-sentinel-ack': () => [],
  };
  if (isTopologyBackend(backend)) return [lockkitContender(spec)];
  const variants = (switchable[backend] ?? []).map((variant) => lockkitContender(spec, variant));
  return [lockkitContender(spec), lockkitOtelContender(spec), ...variants, ...peers[backend]()];
}

/**
 * What a user can switch off for speed, measured beside the defaults: the inspection record
 * of every hold, and on MariaDB the crash-safe fencing table (see each package's README).
 */
const switchable: Partial<Record<BackendId, readonly ProviderVariant[]>> = {
  redis: [{ recordHolds: false }],
  redlock: [{ recordHolds: false }],
  postgres: [{ recordHolds: false }],
  mysql: [{ recordHolds: false }, { recordHolds: false, fencing: 'sequence' }],
};

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs every measurement for every contender of `backend`. A failure is recorded in the
 * contender's notes and the run goes on; nothing is asserted.
 */
export async function benchBackend(
  backend: BackendId,
  lab: Lab,
  settings: BenchSettings,
  progress: (line: string) => void,
): Promise<ContenderResult[]> {
  const contenders = contendersFor(backend, lab);
  const servers = lab.serversOf(backend);
  progress(`${backend}: uncontended (${contenders.length} contenders, interleaved)`);
  const uncontended = await measureUncontended(contenders, settings.slices, settings.sliceMs);
  const results: ContenderResult[] = [];
  for (const [index, contender] of contenders.entries()) {
    const notes: string[] = [];
    const failed = uncontended.errors[index];
    if (failed) notes.push(`uncontended failed: ${failed}`);
    let handoff: HandoffResult | undefined;
    let workers: WorkersResult | undefined;
    let held: HeldResult | undefined;
    // A variant measured for its uncontended figure beside the plain row gets nothing else.
    const full = contender.uncontendedOnly !== true;
    if (full && contender.waits === true) {
      progress(`${backend}: ${contender.library}: handoff`);
      try {
        const samples = await measureHandoff(
          contender,
          settings.handoffRounds,
          settings.handoffBudgetMs,
        );
        handoff = {
          p50: quantile(samples, 0.5),
          p99: quantile(samples, 0.99),
          samples: samples.length,
        };
      } catch (error) {
        notes.push(`handoff failed: ${message(error)}`);
      }
      progress(`${backend}: ${contender.library}: 8 workers`);
      try {
        workers = await measureWorkers(contender, settings.workerMs);
        if (workers.overlaps > 0) notes.push(`${workers.overlaps} overlapping critical sections!`);
      } catch (error) {
        notes.push(`workers failed: ${message(error)}`);
      }
    } else if (full) {
      notes.push(`no handoff or workers: ${contender.waits}`);
    }
    if (full && contender.holdsMany === true) {
      progress(`${backend}: ${contender.library}: ${settings.heldLocks} held locks`);
      try {
        held = await measureHeld(contender, settings.heldLocks, servers);
      } catch (error) {
        notes.push(`held locks failed: ${message(error)}`);
      }
    } else if (full) {
      notes.push(`no held-locks figure: ${contender.holdsMany}`);
    }
    results.push({
      backend,
      library: contender.library,
      lockkit: contender.lockkit,
      uncontended: failed ? Number.NaN : (uncontended.rates[index] ?? Number.NaN),
      uncontendedCpuMicros: failed ? Number.NaN : (uncontended.cpuMicros[index] ?? Number.NaN),
      handoff,
      workers,
      held,
      notes,
    });
  }
  return results;
}

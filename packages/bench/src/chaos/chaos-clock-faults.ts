import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BackendId } from '../backends/backend-ids.js';
import type { ServerClock } from '../backends/server-clocks.js';
import { monotonicMs } from '../support/monotonic-clock.js';
import type { SeededRandom } from '../support/seeded-random.js';
import { atHolder, type FaultContext, recoverySlackMs } from './chaos-faults.js';
import type { WorkerConfig } from './chaos-messages.js';
import type { FaultKind, FaultWindow } from './fault-kinds.js';
import type { Placement } from './worker-pool.js';

/** The faults of `--faults clock`. */
export type ClockFaultKind = Extract<
  FaultKind,
  'clock-back-holder' | 'clock-ahead-contender' | 'clock-ahead-server' | 'clock-back-server'
>;

const clientClockFaults: readonly ClockFaultKind[] = ['clock-back-holder', 'clock-ahead-contender'];
const serverClockFaults: readonly ClockFaultKind[] = ['clock-ahead-server', 'clock-back-server'];

export function isClockFault(kind: FaultKind): kind is ClockFaultKind {
  return (clientClockFaults as readonly string[]).concat(serverClockFaults).includes(kind);
}

/** How far a wall clock jumps. */
export const clockJumpSeconds = 60;

const libfaketimePaths = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
];

/**
 * `--faults clock`: every worker starts under libfaketime with a timestamp file of its own,
 * which libfaketime re-reads on every clock call (`FAKETIME_NO_CACHE`), so writing `-60` into
 * it jumps that worker's wall clock at once. Its monotonic clock is left alone
 * (`FAKETIME_DONT_FAKE_MONOTONIC`): the providers time leases on it, and the checker's
 * statements are stamped on it, so the checker stays valid for a jumped worker.
 */
export function placeUnderFaketime(
  config: WorkerConfig,
  backend: BackendId,
  log: (line: string) => void,
  serverClock: ServerClock,
): {
  placement: (() => Placement) | undefined;
  network: undefined;
  plan(random: SeededRandom, quick: boolean, cycles: number, skipped: string[]): FaultKind[];
} {
  const library = libfaketimePaths.find((path) => existsSync(path));
  if (!library) {
    const reason = 'every clock fault (libfaketime is not installed: apt-get install faketime)';
    log(`${backend}: clock faults skipped: libfaketime is not installed`);
    return {
      placement: undefined,
      network: undefined,
      plan: (_random, _quick, _cycles, skipped) => {
        skipped.push(reason);
        return [];
      },
    };
  }
  const directory = mkdtempSync(join(tmpdir(), 'lockkit-chaos-clock-'));
  process.once('exit', () => rmSync(directory, { recursive: true, force: true }));
  let made = 0;
  log(`${backend}: workers under libfaketime (wall clock only), clock files in ${directory}`);
  return {
    placement: () => {
      const clockFile = join(directory, `worker-${made++}`);
      writeFileSync(clockFile, '+0');
      return {
        config,
        clockFile,
        env: {
          LD_PRELOAD: library,
          FAKETIME_TIMESTAMP_FILE: clockFile,
          FAKETIME_NO_CACHE: '1',
          FAKETIME_DONT_FAKE_MONOTONIC: '1',
        },
      };
    },
    network: undefined,
    plan: (random, quick, cycles, skipped) => {
      const all: FaultKind[] = [...clientClockFaults];
      if (serverClock.file !== undefined) {
        all.push(...serverClockFaults);
      } else {
        skipped.push(`${serverClockFaults.join(', ')} (${serverClock.skipped})`);
        log(`${backend}: server clock faults skipped: ${serverClock.skipped}`);
      }
      return quick ? all : Array.from({ length: cycles }, () => random.shuffle(all)).flat();
    },
  };
}

/**
 * Jumps one worker's wall clock for `max(abandonedReleaseMs, lostDetectionMs)` + 1 s, then
 * sets it right: a holder's 60 s back (`clock-back-holder`), or a worker's 60 s ahead while
 * the others hold (`clock-ahead-contender`; it judges *their* leases with its clock, so the
 * fault is declared as hitting every worker).
 */
export async function injectClockFault(
  kind: ClockFaultKind,
  context: FaultContext,
): Promise<FaultWindow> {
  const { bounds } = context;
  const lastsMs = Math.max(bounds.abandonedReleaseMs, bounds.lostDetectionMs) + 1000;
  const recoveryBoundMs = lastsMs + recoverySlackMs;
  const jump = (file: string | undefined, offset: string): void => {
    if (file === undefined) throw new Error(`${kind} needs the workers of \`--faults clock\``);
    writeFileSync(file, offset);
  };
  if (kind === 'clock-ahead-server' || kind === 'clock-back-server') {
    const file = context.serverClock?.file;
    const offset = `${kind === 'clock-ahead-server' ? '+' : '-'}${clockJumpSeconds}`;
    let startedAt = 0;
    // At a grant, so that a lease is live on the server when its clock jumps.
    const { locks } = await atHolder(context, () => {
      jump(file, offset);
      startedAt = monotonicMs();
    });
    await sleep(lastsMs);
    // Setting it right is a jump too (back by a minute, or ahead by one).
    const clearedAt = monotonicMs();
    jump(file, '+0');
    return {
      kind,
      description: `every server's wall clock ${offset} s (${context.servers.length} server(s); ${locks.join(', ') || 'nothing'} held) for ${lastsMs} ms, then set right`,
      startedAt,
      clearedAt,
      pids: undefined,
      recoveryBoundMs,
    };
  }
  if (kind === 'clock-back-holder') {
    let startedAt = 0;
    const { worker, locks } = await atHolder(context, (victim) => {
      jump(victim.clockFile, `-${clockJumpSeconds}`);
      startedAt = monotonicMs();
    });
    await sleep(lastsMs);
    const clearedAt = monotonicMs();
    jump(worker.clockFile, '+0');
    return {
      kind,
      description: `worker ${worker.pid}'s wall clock ${clockJumpSeconds} s back while holding ${locks.join(', ') || 'nothing'}, for ${lastsMs} ms`,
      startedAt,
      clearedAt,
      // Its clock also judges every other holder's lease (files: a heartbeat's mtime), so it
      // can take their locks over too: the fault hits every worker.
      pids: undefined,
      recoveryBoundMs,
    };
  }
  const holders = new Set(context.ledger.openGrants().map((grant) => grant.pid));
  const running = context.pool.running();
  const contender =
    running.find((worker) => !holders.has(worker.pid)) ?? context.random.pick(running);
  const startedAt = monotonicMs();
  jump(contender.clockFile, `+${clockJumpSeconds}`);
  await sleep(lastsMs);
  const clearedAt = monotonicMs();
  jump(contender.clockFile, '+0');
  return {
    kind,
    description: `worker ${contender.pid}'s wall clock ${clockJumpSeconds} s ahead for ${lastsMs} ms (it judges every holder's lease)`,
    startedAt,
    clearedAt,
    pids: undefined,
    recoveryBoundMs,
  };
}

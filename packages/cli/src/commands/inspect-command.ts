import { type LockUrl, parseLockUrl, redactUrl } from 'lockkit';
import { exitCodes } from '../exit-codes.js';
import { formatReport, type InspectReport } from '../inspect/inspect-report.js';
import type { InspectCommand, LockTarget } from '../invocation.js';
import type { Output } from '../output.js';

const cannotTell: Readonly<Record<string, string>> = {
  redis:
    'Redis stores only a random token per holder, not who it is. To see whether the lock is free, try it: lockkit run <url> <name> -n -- true (exit 75: held)',
  zookeeper:
    'ZooKeeper knows only the session id of the holder’s node, and lockkit inspect does not read ZooKeeper yet. Try the lock instead: lockkit run <url> <name> -n -- true (exit 75: held)',
  memory: 'in-memory locks live inside one process; no other process can see them',
};

/** `lockkit inspect`: prints who holds the lock, where the backend can tell. Only reads. */
export async function inspectCommand(inspect: InspectCommand, output: Output): Promise<number> {
  const resolved = parseLockUrl(inspect.url);
  const lock = describe(inspect.name, inspect.target);
  const report = await inspectBackend(resolved, inspect.name, inspect.target, lock);
  if (inspect.json) {
    output.print(JSON.stringify({ url: redactUrl(inspect.url), ...report }, null, 2));
  } else {
    for (const line of formatReport(report, redactUrl(inspect.url))) output.print(line);
  }
  return exitCodes.ok;
}

/** Asks the backend; each inspector is loaded only when its backend is asked. */
async function inspectBackend(
  resolved: LockUrl,
  name: string,
  target: LockTarget,
  lock: string,
): Promise<InspectReport> {
  const options = resolved.providerOptions;
  switch (resolved.backend) {
    case 'file': {
      const { inspectFile } = await import('../inspect/file-inspector.js');
      return inspectFile(options, name, target, lock);
    }
    case 'postgres': {
      const { inspectPostgres } = await import('../inspect/postgres-inspector.js');
      return inspectPostgres(options, name, target, lock);
    }
    case 'mysql': {
      const { inspectMySql } = await import('../inspect/mysql-inspector.js');
      return inspectMySql(options, name, target, lock);
    }
    case 'etcd': {
      const { inspectEtcd } = await import('../inspect/etcd-inspector.js');
      return inspectEtcd(options, name, target, lock);
    }
    default:
      return {
        backend: resolved.backend,
        lock,
        canTell: false,
        reason: cannotTell[resolved.backend] ?? 'not supported',
        holders: [],
        waiters: [],
        notes: [],
      };
  }
}

function describe(name: string, target: LockTarget): string {
  const quoted = JSON.stringify(name);
  if (target.kind === 'mutex') return `lock ${quoted}`;
  if (target.kind === 'semaphore') return `semaphore ${quoted} (${target.maxCount} permits)`;
  return `read-write lock ${quoted}`;
}

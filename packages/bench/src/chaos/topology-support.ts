import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerHandle } from '@lockkit/testkit';
import { Redis } from 'ioredis';
import { monotonicMs } from '../support/monotonic-clock.js';

/** A Redis Cluster or Sentinel fault: what was done, and when it started and was over. */
export interface TopologyFaultOutcome {
  readonly description: string;
  readonly startedAt: number;
  readonly clearedAt: number;
}

/** Resolves once `node` reports itself a replica with its link to the primary up (≤ 30 s). */
export async function awaitLinkedReplica(node: ServerHandle): Promise<void> {
  const client = new Redis(node.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const deadline = monotonicMs() + 30_000;
  try {
    await client.connect();
    while (monotonicMs() < deadline) {
      const info = await client.info('replication');
      if (/role:slave/.test(info) && /master_link_status:up/.test(info)) return;
      await sleep(50);
    }
    throw new Error(`node on port ${node.port} did not rejoin as a replica within 30 s`);
  } finally {
    client.disconnect();
  }
}

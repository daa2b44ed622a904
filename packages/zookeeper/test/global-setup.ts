import { setupServers } from '@lockkit/testkit';
import type { TestProject } from 'vitest/node';

/**
 * One ZooKeeper (tickTime 200 ms, so sessions down to 400 ms) shared by the test files, or
 * the one LOCKKIT_ZOOKEEPER_URL names. Fault tests start servers of their own.
 */
export default (project: TestProject): Promise<() => Promise<void>> =>
  setupServers(project, { zookeeper: { tickTimeMs: 200 } });

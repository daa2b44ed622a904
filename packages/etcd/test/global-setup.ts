import { setupServers } from '@lockkit/testkit';
import type { TestProject } from 'vitest/node';

/**
 * One single-member etcd (heartbeat 50 ms, election 500 ms, so 1 s leases are allowed) shared
 * by the test files, or the one LOCKKIT_ETCD_URL names. Fault tests start servers of their own.
 */
export default (project: TestProject): Promise<() => Promise<void>> =>
  setupServers(project, { etcd: true });

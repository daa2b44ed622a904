import { setupServers } from '@lockkit/testkit';
import type { TestProject } from 'vitest/node';

/**
 * Throwaway servers of every backend (or the LOCKKIT_*_URL ones): three Redis nodes (one alone,
 * all three as Redlock), PostgreSQL, MariaDB, ZooKeeper and etcd; files need no server.
 */
export default (project: TestProject): Promise<() => Promise<void>> =>
  setupServers(project, { redis: 3, postgres: true, mariadb: true, zookeeper: true, etcd: true });

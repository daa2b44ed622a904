import { setupServers } from '@lockkit/testkit';
import type { TestProject } from 'vitest/node';

/** A throwaway PostgreSQL, MariaDB and etcd (or the LOCKKIT_*_URL ones); files need no server. */
export default (project: TestProject): Promise<() => Promise<void>> =>
  setupServers(project, { postgres: true, mariadb: true, etcd: true });

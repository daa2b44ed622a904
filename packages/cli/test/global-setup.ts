import { setupServers } from '@lockkit/testkit';
import type { TestProject } from 'vitest/node';

/** A throwaway PostgreSQL and MariaDB (or the LOCKKIT_*_URL ones); files need no server. */
export default (project: TestProject): Promise<() => Promise<void>> =>
  setupServers(project, { postgres: true, mariadb: true });

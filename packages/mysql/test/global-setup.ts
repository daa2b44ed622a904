import { setupServers } from '@lockkit/testkit';
import type { TestProject } from 'vitest/node';

/** One throwaway MariaDB for the whole run (or `LOCKKIT_MYSQL_URL`). */
export default (project: TestProject): Promise<() => Promise<void>> =>
  setupServers(project, { mariadb: true });

import { setupServers } from '@lockkit/testkit';
import type { TestProject } from 'vitest/node';

/** A throwaway PostgreSQL for the server-backend run (or LOCKKIT_POSTGRES_URL). */
export default (project: TestProject): Promise<() => Promise<void>> =>
  setupServers(project, { postgres: true });

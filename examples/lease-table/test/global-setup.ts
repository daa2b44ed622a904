import { setupServers } from '@lockkit/testkit';
import type { TestProject } from 'vitest/node';

/** One throwaway PostgreSQL for the run; test files read its URL with inject('lockkitServers'). */
export default (project: TestProject): Promise<() => Promise<void>> =>
  setupServers(project, { postgres: true });

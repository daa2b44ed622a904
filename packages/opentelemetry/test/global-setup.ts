import { setupServers } from '@lockkit/testkit';
import type { TestProject } from 'vitest/node';

/** One throwaway Redis server for the run (or LOCKKIT_REDIS_URLS). */
export default function setup(project: TestProject): Promise<() => Promise<void>> {
  return setupServers(project, { redis: 1 });
}

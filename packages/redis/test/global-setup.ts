import { setupServers } from '@lockkit/testkit';
import type { TestProject } from 'vitest/node';

/** Five throwaway Redis servers for the run (or LOCKKIT_REDIS_URLS): 1, 3 and 5 node setups. */
export default function setup(project: TestProject): Promise<() => Promise<void>> {
  return setupServers(project, { redis: 5 });
}

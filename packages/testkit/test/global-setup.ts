import type { TestProject } from 'vitest/node';
import { setupServers } from '../src/index.js';

/** Two shared Redis servers, for the attachServer tests. */
export default function setup(project: TestProject): Promise<() => Promise<void>> {
  return setupServers(project, { redis: 2, redisOptions: { useEnvironment: false } });
}

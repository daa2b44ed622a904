import { setupServers } from '@lockkit/testkit';
import type { TestProject } from 'vitest/node';

/** PostgreSQL settings the tests need: room for 10 000 advisory locks and many sessions. */
export const postgresSettings: Readonly<Record<string, string>> = {
  max_locks_per_transaction: '256',
  max_connections: '200',
};

export default (project: TestProject): Promise<() => Promise<void>> =>
  setupServers(project, { postgres: { settings: postgresSettings } });

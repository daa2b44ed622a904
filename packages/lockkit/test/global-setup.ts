import { setupServers } from '@lockkit/testkit';
import type { TestProject } from 'vitest/node';

/** One of each server (three Redis for Redlock URLs), or the ones LOCKKIT_*_URL name. */
export default (project: TestProject): Promise<() => Promise<void>> =>
  setupServers(project, { redis: 3, postgres: true, mariadb: true, zookeeper: true, etcd: true });

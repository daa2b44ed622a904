import { describeLockProvider } from '@lockkit/conformance';
import { startRedisServers } from '@lockkit/testkit';
import { afterAll } from 'vitest';
import { redisConformance } from './conformance-options.js';

// Its own servers: the outage case pauses them, which must not disturb other files.
const servers = await startRedisServers(1, { useEnvironment: false });
afterAll(() => Promise.all(servers.map((server) => server.stop())));

describeLockProvider(await redisConformance('redis, single node', servers, true));

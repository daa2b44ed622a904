import { describeLockProvider } from '@lockkit/conformance';
import { inject } from 'vitest';
import { redisConformance } from './conformance-options.js';

describeLockProvider(
  redisConformance('redis, single node', inject('lockkitServers').redisUrls.slice(0, 1)),
);

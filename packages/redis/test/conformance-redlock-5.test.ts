import { describeLockProvider } from '@lockkit/conformance';
import { inject } from 'vitest';
import { redisConformance } from './conformance-options.js';

describeLockProvider(
  redisConformance('redis, Redlock on 5 nodes', inject('lockkitServers').redisUrls.slice(0, 5)),
);

/**
 * Property-based: random sequences of acquire / tryAcquire / timeout / abort / release /
 * close on a real Redis server (the conformance package's `fuzzApiSequences`). A failure
 * prints fast-check's seed and the shrunk sequence; FUZZ_SEED reruns another seed.
 */
import { fuzzApiSequences } from '@lockkit/conformance';
import { expect, inject, it } from 'vitest';
import { createRedisLockProvider } from '../src/index.js';
import { timeScale } from './support.js';

const urls = inject('lockkitServers').redisUrls;

it('random API sequences on Redis agree with the model', async () => {
  const ran = await fuzzApiSequences({
    createProvider: () => createRedisLockProvider({ nodes: [urls[0]!] }),
    numRuns: 40,
    maxCommands: 20,
    timeScale,
  });
  expect(ran).toBeGreaterThan(200);
}, 120_000);

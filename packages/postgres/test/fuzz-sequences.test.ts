/**
 * Property-based: random sequences of acquire / tryAcquire / timeout / abort / release /
 * close on a real PostgreSQL server (the conformance package's `fuzzApiSequences`). A failure
 * prints fast-check's seed and the shrunk sequence; FUZZ_SEED reruns another seed.
 */
import { fuzzApiSequences } from '@lockkit/conformance';
import { expect, inject, it } from 'vitest';
import { createPostgresLockProvider } from '../src/index.js';
import { timeScale } from './support.js';

const url = inject('lockkitServers').postgresUrl!;

it('random API sequences on PostgreSQL agree with the model', async () => {
  const ran = await fuzzApiSequences({
    createProvider: () => createPostgresLockProvider({ connection: url }),
    numRuns: 40,
    maxCommands: 20,
    timeScale,
  });
  expect(ran).toBeGreaterThan(200);
}, 120_000);

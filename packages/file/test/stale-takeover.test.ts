import { mkdirSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyDirName } from '../src/index.js';
import { startChild, TEST_LEASE_MS, temporaryDirectory } from './support.js';

const directory = temporaryDirectory('takeover');
const env = { LOCKKIT_TEST_FILE_DIR: directory, LOCKKIT_TEST_LEASE_MS: String(TEST_LEASE_MS) };

/** Leaves a lock directory the way a SIGKILLed holder does, its heartbeat long stale. */
function abandonedLock(lockDir: string): void {
  const marker = join(lockDir, `99999.dead00.${Math.random().toString(36).slice(2)}.1`);
  mkdirSync(marker, { recursive: true });
  const longAgo = (Date.now() - 10 * TEST_LEASE_MS) / 1000;
  utimesSync(lockDir, longAgo, longAgo); // the lock directory's mtime is the heartbeat
}

describe('stale takeover (proper-lockfile #121: two contenders both "win" a stale lock)', () => {
  it('exactly one of six processes takes over an abandoned lock, round after round', async () => {
    const contenders = await Promise.all(
      Array.from({ length: 6 }, () => startChild('contender', env)),
    );
    const cases = [
      { kind: 'mutex', lockDir: 'lock' },
      { kind: 'write', lockDir: 'gate' },
    ] as const;
    let lastToken = 0n;
    for (let round = 0; round < 10; round++) {
      const { kind, lockDir } = cases[round % 2]!;
      const name = `stale-${round}`;
      const keyDir = join(directory, keyDirName('', kind, name));
      abandonedLock(join(keyDir, lockDir));
      const startAt = Date.now() + 150;
      for (const child of contenders) child.send({ cmd: 'try', name, kind, startAt });
      const answers = await Promise.all(contenders.map((child) => child.next()));
      const winners = contenders.filter((_, index) => answers[index]!['ok'] === true);
      expect(winners, `round ${round}: ${JSON.stringify(answers)}`).toHaveLength(1);
      const token = BigInt(String(answers.find((answer) => answer['ok'])!['token']));
      expect(token).toBeGreaterThan(0n);
      if (kind === 'mutex') lastToken = token;
      // The dead holder's marker is gone; the winner's marker is the only one.
      expect(readdirSync(join(keyDir, lockDir))).toHaveLength(1);
      winners[0]!.send({ cmd: 'release' });
      expect(await winners[0]!.next()).toMatchObject({ event: 'released', held: true });
    }
    expect(lastToken).toBeGreaterThan(0n);
    await Promise.all(contenders.map((child) => child.kill()));
  }, 60_000);
});

/**
 * The provider's bookkeeping of held handles, on core's in-process memory provider.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryLockProvider } from '../src/index.js';

describe('held handles', () => {
  it('heldCount follows acquires and releases in any order, and close() releases the rest', async () => {
    const provider = createMemoryLockProvider();
    const handles = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((name) => provider.createLock(name).acquire()),
    );
    expect(provider.heldCount).toBe(5);
    // Release from the middle, the most recent and the oldest.
    for (const index of [2, 4, 0]) expect(await handles[index]?.release()).toBe(true);
    expect(await handles[2]?.release()).toBe(true); // idempotent: the same answer again
    expect(provider.heldCount).toBe(2);
    await provider.close();
    expect(provider.heldCount).toBe(0);
    // close() released b and d while they were held: their release() says so.
    expect(await handles[1]?.release()).toBe(true);
    expect(await handles[3]?.release()).toBe(true);
  });
});

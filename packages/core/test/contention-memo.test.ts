import { afterEach, describe, expect, it, vi } from 'vitest';
import { ContentionMemo } from '../src/for-backends.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('ContentionMemo', () => {
  it('a lock counts as contended for the window after its last failed try, then not', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const memo = new ContentionMemo(1000);
    expect(memo.isContended('a')).toBe(false);
    memo.markContended('a');
    vi.advanceTimersByTime(600);
    expect(memo.isContended('a')).toBe(true);
    memo.markContended('a'); // another failed try renews the window
    vi.advanceTimersByTime(600);
    expect(memo.isContended('a')).toBe(true);
    vi.advanceTimersByTime(400);
    expect(memo.isContended('a')).toBe(false);
  });

  it('drops expired keys when it marks another, so it does not grow with every name', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const memo = new ContentionMemo(100);
    for (let index = 0; index < 50; index++) memo.markContended(`old-${index}`);
    memo.markContended('renewed');
    vi.advanceTimersByTime(50);
    memo.markContended('renewed');
    vi.advanceTimersByTime(60);
    memo.markContended('new');
    expect(memo.size).toBe(2);
    expect(memo.isContended('renewed')).toBe(true);
    expect(memo.isContended('old-0')).toBe(false);
  });
});

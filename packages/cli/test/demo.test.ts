import { describe, expect, it } from 'vitest';
import { lockkit } from './lockkit-process.js';

describe('lockkit demo', () => {
  it('sells exactly 10 on the file backend, in worker processes', async () => {
    const result = await lockkit('demo');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('backend: file');
    expect(result.stdout).toContain('OK: exactly 10 sold, no oversell');
    expect(result.stdout).toContain('tokens strictly increasing: yes');
  });

  it('runs on memory: as tasks of one process', async () => {
    const result = await lockkit('demo', 'memory:');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('backend: memory');
    expect(result.stdout).toContain('sold 10 of 10; stock left 0');
  });
});

import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A throwaway project where lockkit is installed WITHOUT most backends, exactly as npm would
// lay it out: node_modules/lockkit (the built package), node_modules/@lockkit/core, and
// node_modules/@lockkit/file. Each case runs plain Node in that project, so resolution is
// Node's own, not the test runner's.

const run = promisify(execFile);
const packages = join(dirname(fileURLToPath(import.meta.url)), '../..');
let project: string;

function install(name: string, from: string, how: 'link' | 'copy'): void {
  const target = join(project, 'node_modules', name);
  mkdirSync(dirname(target), { recursive: true });
  if (how === 'link') {
    symlinkSync(from, target, 'dir');
  } else {
    mkdirSync(target);
    cpSync(join(from, 'package.json'), join(target, 'package.json'));
    cpSync(join(from, 'dist'), join(target, 'dist'), { recursive: true });
  }
}

/**
 * Runs `createLockProvider(url)` in the project, loading lockkit with `import` (ESM) or
 * `require` (its CommonJS build); returns what happened, as JSON.
 */
async function attempt(
  url: string,
  format: 'esm' | 'cjs' = 'esm',
): Promise<Record<string, unknown>> {
  const load =
    format === 'esm'
      ? `import { createLockProvider, BackendNotInstalledError, BackendUnavailableError } from 'lockkit';`
      : `const { createLockProvider, BackendNotInstalledError, BackendUnavailableError } = require('lockkit');`;
  const script = `
    ${load}
    (async () => {
    try {
      const provider = await createLockProvider(${JSON.stringify(url)});
      const handle = await provider.createLock('x').acquire({ timeout: 1000 });
      console.log(JSON.stringify({ backend: provider.backend, token: String(handle.fencingToken) }));
      await provider.close();
    } catch (error) {
      console.log(JSON.stringify({
        name: error.name, code: error.code, message: error.message,
        missingPackage: error.missingPackage, installCommand: error.installCommand,
        notInstalled: BackendNotInstalledError.isInstance(error),
        unavailable: BackendUnavailableError.isInstance(error),
        cause: error.cause?.code,
      }));
    }
    })();`;
  const inputType = format === 'esm' ? '--input-type=module' : '--input-type=commonjs';
  // No NODE_PATH (pnpm's bin shims set one): require() would find the workspace's packages.
  const { NODE_PATH: _ignored, ...env } = process.env;
  const { stdout } = await run(process.execPath, [inputType, '-e', script], {
    cwd: project,
    env,
    timeout: 20_000,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'lockkit-missing-'));
  // Nothing above the project may provide packages, or this test would prove nothing.
  expect(existsSync(join(dirname(project), 'node_modules'))).toBe(false);
  install('lockkit', join(packages, 'lockkit'), 'copy');
  install('@lockkit/core', join(packages, 'core'), 'link');
  install('@lockkit/file', join(packages, 'file'), 'link');
  // The Redis backend without its client library (ioredis is a peer dependency).
  install('@lockkit/redis', join(packages, 'redis'), 'copy');
});

afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('a backend that is not installed', () => {
  it('is a BackendNotInstalledError naming the npm install command', async () => {
    const outcome = await attempt('postgres://app@127.0.0.1:1/app');
    expect(outcome).toMatchObject({
      name: 'BackendNotInstalledError',
      code: 'BACKEND_UNAVAILABLE',
      missingPackage: '@lockkit/postgres',
      installCommand: 'npm install @lockkit/postgres pg',
      notInstalled: true,
      unavailable: true,
      cause: 'ERR_MODULE_NOT_FOUND',
    });
    expect(outcome['message']).toContain('npm install @lockkit/postgres pg');
  });

  it('names the client library when the backend package is there but its peer is not', async () => {
    const outcome = await attempt('redis://127.0.0.1:1');
    expect(outcome).toMatchObject({
      name: 'BackendNotInstalledError',
      missingPackage: 'ioredis',
      installCommand: 'npm install @lockkit/redis ioredis',
    });
  });

  it.each([
    ['mysql://root@127.0.0.1:1/x', '@lockkit/mysql'],
    ['zk://127.0.0.1:1', '@lockkit/zookeeper'],
    ['etcd://127.0.0.1:1', '@lockkit/etcd'],
  ])('%s → %s', async (url, missingPackage) => {
    expect(await attempt(url)).toMatchObject({ notInstalled: true, missingPackage });
  });

  it('does not stop the installed backends from working (only the selected one is imported)', async () => {
    const lockDirectory = join(project, 'locks');
    expect(await attempt(`file://${lockDirectory}`)).toEqual({ backend: 'file', token: '1' });
    expect(await attempt('memory:')).toEqual({ backend: 'memory', token: '1' });
  });
});

describe('a backend that is not installed, from CommonJS (require)', () => {
  it('is the same BackendNotInstalledError, from the CommonJS build', async () => {
    expect(await attempt('postgres://app@127.0.0.1:1/app', 'cjs')).toMatchObject({
      name: 'BackendNotInstalledError',
      missingPackage: '@lockkit/postgres',
      installCommand: 'npm install @lockkit/postgres pg',
      notInstalled: true,
      cause: 'MODULE_NOT_FOUND',
    });
    expect(await attempt('redis://127.0.0.1:1', 'cjs')).toMatchObject({
      missingPackage: 'ioredis',
      installCommand: 'npm install @lockkit/redis ioredis',
    });
  });

  it('loads an installed backend', async () => {
    const lockDirectory = join(project, 'locks-cjs');
    expect(await attempt(`file://${lockDirectory}`, 'cjs')).toEqual({
      backend: 'file',
      token: '1',
    });
  });
});

import { describe, expect, it } from 'vitest';
import { findExecutable, findFile } from '../src/executables.js';
import { MissingServerBinaryError } from '../src/index.js';

describe('a missing server binary', () => {
  it('is an error naming the Debian package and how to install it', () => {
    const find = (): string =>
      findExecutable(['lockkit-no-such-server'], 'mariadb-server', ['/nonexistent']);
    expect(find).toThrow(MissingServerBinaryError);
    expect(find).toThrow(/"mariadb-server".*apt-get install -y mariadb-server/);
    expect(find).toThrow(/or put the binary on PATH/);
  });

  it('covers files too (the ZooKeeper jar)', () => {
    expect(() => findFile(['/nonexistent/zookeeper.jar'], 'zookeeper')).toThrow(
      /Install the Debian package "zookeeper"/,
    );
  });

  it('is not raised for the installed servers', () => {
    expect(findExecutable(['redis-server'], 'redis-server')).toMatch(/redis-server$/);
  });
});

import { describe, expect, it } from 'vitest';
import { decide, parseNode, queueOf } from '../src/index.js';

const uuid = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const node = (prefix: string, n: number, sequence: string): string =>
  `${prefix}${uuid(n)}-${sequence}`;
const seq = (n: number): string => String(n).padStart(10, '0');

describe('queue recipes', () => {
  it('parses our node names and ignores foreign children', () => {
    expect(parseNode(node('lock-', 1, seq(42)))).toEqual({
      name: node('lock-', 1, seq(42)),
      kind: 'mutex',
      id: uuid(1),
      permits: 1,
      sequence: 42,
    });
    expect(parseNode(node('leases3-', 1, seq(43)))).toMatchObject({
      kind: 'semaphore',
      permits: 3,
    });
    expect(parseNode(node('leases0-', 1, seq(44)))).toBeUndefined();
    expect(parseNode('lock-not-a-uuid-0000000001')).toBeUndefined();
    expect(parseNode('zookeeper')).toBeUndefined();
    const queue = queueOf([node('lock-', 2, seq(7)), 'stray', node('lock-', 1, seq(3))]);
    expect(queue.map((entry) => entry.sequence)).toEqual([3, 7]);
  });

  it('keeps queue order when the 32-bit sequence counter wraps to negative', () => {
    const queue = queueOf([
      node('lock-', 1, '-2147483648'),
      node('lock-', 2, '2147483647'),
      node('lock-', 3, '-2147483647'),
    ]);
    expect(queue.map((entry) => entry.id)).toEqual([uuid(2), uuid(1), uuid(3)]);
  });

  it('mutex and writer: first holds, every other watches only its predecessor', () => {
    const names = [1, 2, 3].map((n) => node('lock-', n, seq(n)));
    const queue = queueOf(names);
    expect(decide('mutex', 1, queue, names[0]!)).toEqual({ action: 'granted', successors: 2 });
    expect(decide('mutex', 1, queue, names[2]!)).toEqual({
      action: 'watch-node',
      node: names[1],
    });
    expect(decide('mutex', 1, queue, node('lock-', 9, seq(9)))).toEqual({ action: 'missing' });
    const rw = queueOf([node('read-', 1, seq(1)), node('write-', 2, seq(2))]);
    expect(decide('write', 1, rw, rw[1]!.name)).toEqual({
      action: 'watch-node',
      node: rw[0]!.name,
    });
  });

  it('reader: holds with only readers ahead, else watches the nearest writer ahead', () => {
    const rw = queueOf([
      node('read-', 1, seq(1)),
      node('write-', 2, seq(2)),
      node('read-', 3, seq(3)),
      node('write-', 4, seq(4)),
      node('read-', 5, seq(5)),
      node('read-', 6, seq(6)),
    ]);
    expect(decide('read', Infinity, rw, rw[0]!.name).action).toBe('granted');
    expect(decide('read', Infinity, rw, rw[2]!.name)).toEqual({
      action: 'watch-node',
      node: rw[1]!.name,
    });
    expect(decide('read', Infinity, rw, rw[5]!.name)).toEqual({
      action: 'watch-node',
      node: rw[3]!.name,
    });
  });

  it('semaphore: strict FIFO; the first waiter watches the children, later ones their predecessor', () => {
    const names = [1, 2, 3, 4, 5].map((n) => node('lease-', n, seq(n)));
    const queue = queueOf(names);
    expect(decide('semaphore', 2, queue, names[1]!)).toEqual({
      action: 'granted',
      successors: 3,
    });
    expect(decide('semaphore', 2, queue, names[2]!)).toEqual({ action: 'watch-children' });
    expect(decide('semaphore', 2, queue, names[4]!)).toEqual({
      action: 'watch-node',
      node: names[3],
    });
  });

  it('weighted semaphore: permits ahead count, and a waiting big request holds back later small ones', () => {
    // max 4: 2 held, then a request for 3 (waits: 2 + 3 > 4), then one for 1 (waits behind it).
    const names = [
      node('leases2-', 1, seq(1)),
      node('leases3-', 2, seq(2)),
      node('lease-', 3, seq(3)),
    ];
    const queue = queueOf(names);
    expect(decide('semaphore', 4, queue, names[0]!)).toEqual({ action: 'granted', successors: 2 });
    expect(decide('semaphore', 4, queue, names[1]!)).toEqual({ action: 'watch-children' });
    expect(decide('semaphore', 4, queue, names[2]!)).toEqual({
      action: 'watch-node',
      node: names[1],
    });
    const fits = queueOf([names[0]!, node('leases2-', 4, seq(4))]);
    expect(decide('semaphore', 4, fits, fits[1]!.name).action).toBe('granted');
  });
});

import { createHash } from 'node:crypto';
import type { LockKind } from './types.js';

/**
 * Name → key mapping, version 1. Backends build their keys from these helpers so every
 * backend maps names the same way: a readable prefix (for humans reading the server) plus a
 * hash of the ORIGINAL name and namespace (for uniqueness). Golden-tested: changing any
 * output is a breaking change and needs a new version.
 */
export const KEY_MAPPING_VERSION = 1;

/** The key family of a lock kind: a RW lock's read and write modes share one key. */
export type KeyFamily = 'mutex' | 'rw' | 'semaphore';

/** The key family of a request kind. Primitives of different families never share a key. */
export function keyFamily(kind: LockKind): KeyFamily {
  return kind === 'read' || kind === 'write' ? 'rw' : kind;
}

/** SHA-256 of the versioned (namespace, family, name) triple. */
export function nameDigest(namespace: string, family: KeyFamily, name: string): Buffer {
  return createHash('sha256')
    .update(`lockkit/v${KEY_MAPPING_VERSION}\0${family}\0${namespace}\0${name}`, 'utf8')
    .digest();
}

const base32Alphabet = 'abcdefghijklmnopqrstuvwxyz234567';

/** RFC 4648 base32, lowercase, no padding. */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += base32Alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += base32Alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** Options for {@link readableKey}. */
export interface ReadableKeyOptions {
  /** Longest key the backend accepts (the result never exceeds it). @defaultValue 200 */
  readonly maxLength?: number;
  /** Fold the readable part to lower case (for case-insensitive servers/file systems). @defaultValue false */
  readonly lowercase?: boolean;
  /** Characters of hash (base32, 5 bits each). @defaultValue 26 (130 bits) */
  readonly hashLength?: number;
}

/**
 * `<family>.<readable>.<hash>`: the readable part keeps `[A-Za-z0-9_-]` of the name (other
 * characters become `_`), truncated to fit `maxLength`; the hash is over the original name,
 * so names differing only in case or in replaced characters still get distinct keys.
 */
export function readableKey(
  namespace: string,
  kind: LockKind,
  name: string,
  options: ReadableKeyOptions = {},
): string {
  const { maxLength = 200, lowercase = false, hashLength = 26 } = options;
  const family = keyFamily(kind);
  const hash = base32(nameDigest(namespace, family, name)).slice(0, hashLength);
  let readable = name.replace(/[^A-Za-z0-9_-]/g, '_');
  if (lowercase) readable = readable.toLowerCase();
  const room = maxLength - family.length - hash.length - 2;
  if (room < 0) throw new RangeError(`maxLength ${maxLength} is too small for a key`);
  readable = readable.slice(0, room);
  return `${family}.${readable}${readable ? '.' : ''}${hash}`;
}

/** A signed 64-bit key (e.g. for PostgreSQL advisory locks) from the versioned digest. */
export function int64Key(namespace: string, kind: LockKind, name: string): bigint {
  return nameDigest(namespace, keyFamily(kind), name).readBigInt64BE(0);
}

import { createHash } from 'node:crypto';
import type { LockRequest } from './backend.js';
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

/** A lone (unpaired) UTF-16 surrogate: a string UTF-8 cannot encode faithfully. */
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** SHA-256 of the versioned (namespace, family, name) triple. */
export function nameDigest(namespace: string, family: KeyFamily, name: string): Buffer {
  const hash = createHash('sha256');
  // NUL separates the fields, so it is unambiguous while the namespace has no NUL.
  if (!namespace.includes('\0') && !loneSurrogate.test(namespace) && !loneSurrogate.test(name)) {
    return hash
      .update(`lockkit/v${KEY_MAPPING_VERSION}\0${family}\0${namespace}\0${name}`, 'utf8')
      .digest();
  }
  // Otherwise ("a", "b\0c") and ("a\0b", "c") would meet, and UTF-8 turns every lone
  // surrogate into U+FFFD: hash the namespace's length and the UTF-16 code units instead,
  // after a prefix that no triple of the form above produces.
  return hash
    .update(`lockkit/v${KEY_MAPPING_VERSION}-utf16\0${family}\0${namespace.length}\0`, 'utf8')
    .update(`${namespace}${name}`, 'utf16le')
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

/**
 * Memoises a backend's name → keys mapping (which hashes the name) for the names in use, so a
 * lock taken again and again is hashed once. Keyed by (namespace, key family, name), one map
 * per (namespace, family), so a lookup builds no string; bounded: cleared once `limit` entries
 * are held; names over 256 characters are derived every time (remembering long strings costs
 * more memory than the hash saves). The one memo every backend uses.
 */
export function memoizeKeys<K>(
  derive: (request: LockRequest) => K,
  limit = 1000,
): (request: LockRequest) => K {
  const families = new Map<string, Map<KeyFamily, Map<string, K>>>();
  let size = 0;
  return (request) => {
    const { namespace, name } = request;
    if (name.length > 256) return derive(request);
    if (size >= limit) {
      families.clear();
      size = 0;
    }
    const family = keyFamily(request.kind);
    let byFamily = families.get(namespace);
    if (byFamily === undefined) {
      byFamily = new Map();
      families.set(namespace, byFamily);
    }
    let byName = byFamily.get(family);
    if (byName === undefined) {
      byName = new Map();
      byFamily.set(family, byName);
    }
    let keys = byName.get(name);
    if (keys === undefined) {
      keys = derive(request);
      byName.set(name, keys);
      size += 1;
    }
    return keys;
  };
}

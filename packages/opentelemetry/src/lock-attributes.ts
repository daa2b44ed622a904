import { hash } from 'node:crypto';
import type { LockKind } from '@lockkit/core';
import type { Attributes } from '@opentelemetry/api';
import { lockAttributes } from './telemetry-names.js';

/**
 * How lock names appear in telemetry: `'raw'` as they are, `'hash'` as
 * `sha256:<first 16 hex digits>` of the name (stable across processes, so one lock can be
 * followed across services, but not secret: a guessable name can be guessed), `'omit'` not
 * at all, or a function that maps a name to what to show (`undefined`: omit).
 */
export type LockNameMode = 'raw' | 'hash' | 'omit' | ((name: string) => string | undefined);

const primitives: Record<LockKind, string> = {
  mutex: 'mutex',
  read: 'read_write',
  write: 'read_write',
  semaphore: 'semaphore',
};

/** Turns lock names into the attribute value the `lockName` option asks for. */
export class LockNamer {
  readonly #mode: LockNameMode;

  constructor(mode: LockNameMode) {
    this.#mode = mode;
  }

  /** The attribute value for `name`, or undefined to leave it out. */
  valueOf(name: string): string | undefined {
    const mode = this.#mode;
    if (mode === 'raw') return name;
    if (mode === 'omit') return undefined;
    // UTF-16 code units, so names that differ only in lone surrogates hash differently.
    if (mode === 'hash') {
      return `sha256:${hash('sha256', Buffer.from(name, 'utf16le'), 'hex').slice(0, 16)}`;
    }
    return mode(name);
  }
}

/** Backend, primitive, mode and (when given) the name: the attributes every signal carries. */
export function baseAttributes(
  backend: string,
  kind: LockKind,
  name: string | undefined,
): Attributes {
  const attributes: Attributes = {
    [lockAttributes.backend]: backend,
    [lockAttributes.primitive]: primitives[kind],
  };
  if (kind === 'read' || kind === 'write') attributes[lockAttributes.mode] = kind;
  if (name !== undefined) attributes[lockAttributes.name] = name;
  return attributes;
}

/**
 * The semantic-convention `error.type` of an error: its string `code` (lockkit's errors have
 * one), else its class name, else `_OTHER`.
 */
export function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    if (error instanceof Error) return error.name;
  }
  return '_OTHER';
}

/** The message of an error, for a span status. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

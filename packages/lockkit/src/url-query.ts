import { InvalidArgumentError } from '@lockkit/core';
import type { BackendInfo } from './backends.js';

/** A URL's query string split into lockkit's provider options and the client's parameters. */
export interface SplitQuery {
  /** Provider options read from the query, typed. */
  readonly options: Readonly<Record<string, unknown>>;
  /** The parameters lockkit does not own, as they were written (`''` or `?a=1&b=2`). */
  readonly clientQuery: string;
}

/**
 * Splits `query` (without the `?`) for `backend`: parameters named like one of the backend's
 * provider options become options; the rest stay in the URL for the client library, or are
 * an error for backends without one.
 */
export function splitQuery(query: string, backend: BackendInfo, shownUrl: string): SplitQuery {
  const options: Record<string, unknown> = {};
  const kept: string[] = [];
  const lowerCaseNames = new Map(
    Object.keys(backend.queryOptions).map((name) => [name.toLowerCase(), name]),
  );
  for (const segment of query.split('&')) {
    if (segment === '') continue;
    const equals = segment.indexOf('=');
    const key = decode(equals < 0 ? segment : segment.slice(0, equals), shownUrl);
    const raw = equals < 0 ? '' : decode(segment.slice(equals + 1), shownUrl);
    const type = Object.hasOwn(backend.queryOptions, key) ? backend.queryOptions[key] : undefined;
    if (type !== undefined) {
      if (Object.hasOwn(options, key)) {
        throw new InvalidArgumentError(`Query parameter "${key}" is given twice in ${shownUrl}`);
      }
      options[key] = convert(key, raw, type, shownUrl);
      continue;
    }
    const meant = lowerCaseNames.get(key.toLowerCase());
    if (meant !== undefined) {
      throw new InvalidArgumentError(
        `Query parameter "${key}" in ${shownUrl} is not a ${backend.id} option; did you mean "${meant}"?`,
      );
    }
    if (!backend.passesQueryToClient) {
      const known = Object.keys(backend.queryOptions).join(', ');
      throw new InvalidArgumentError(
        `Unknown query parameter "${key}" in ${shownUrl} (the ${backend.id} backend takes: ${known})`,
      );
    }
    kept.push(segment);
  }
  return { options, clientQuery: kept.length === 0 ? '' : `?${kept.join('&')}` };
}

function decode(text: string, shownUrl: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    throw new InvalidArgumentError(`Malformed percent-encoding in the query of ${shownUrl}`);
  }
}

function convert(key: string, raw: string, type: string, shownUrl: string): unknown {
  if (type === 'number') {
    const value = raw.trim() === '' ? Number.NaN : Number(raw);
    if (!Number.isFinite(value)) {
      throw new InvalidArgumentError(`Query parameter "${key}" must be a number in ${shownUrl}`);
    }
    return value;
  }
  if (type === 'boolean') {
    if (raw === 'true' || raw === '1' || raw === '') return true;
    if (raw === 'false' || raw === '0') return false;
    throw new InvalidArgumentError(`Query parameter "${key}" must be true or false in ${shownUrl}`);
  }
  return raw;
}

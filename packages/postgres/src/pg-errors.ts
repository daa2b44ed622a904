/** SQLSTATE codes this package reacts to. */
export const sqlState = {
  /** lock_timeout expired. */
  lockNotAvailable: '55P03',
  /** statement cancelled (our cancel request, or a statement_timeout). */
  queryCanceled: '57014',
  /** The server's deadlock detector chose this statement. */
  deadlockDetected: '40P01',
  undefinedTable: '42P01',
  duplicateTable: '42P07',
  uniqueViolation: '23505',
} as const;

/** The SQLSTATE of a server error, or undefined for client/transport errors. */
export function sqlStateOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** A short description of an error for messages. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

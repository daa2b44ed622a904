/** Short leases so the lost-lock and dead-holder cases finish quickly. */
export const testOptions = { leaseMs: 1500, pollIntervalMs: 200, queryTimeoutMs: 400 } as const;

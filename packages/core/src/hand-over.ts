/**
 * Hand-over (`capabilities.handOver`): `handle.export()` turns a hold into an opaque token, and
 * a primitive's `resume(token)` — in another provider, possibly another process — continues
 * the same hold as a new handle (same fencing token, lease extension, lost signal, release).
 *
 * The token is `lk1.` + base64url(JSON): a version, the backend id, the request (namespace,
 * kind, name, maxCount, permits, per-acquire lease settings), the fencing token (a decimal
 * string), the lease length the exporter extended to, and the backend's own grant data
 * (`LockBackend.exportGrant`). It is not signed: it is a bearer credential for the hold.
 * `resume()` checks everything it can before any I/O (a garbled token, another backend,
 * namespace, lock or kind: `InvalidArgumentError`); the backend then checks on the server
 * that the hold is still that owner's (`LockBackend.resumeGrant`), and `LockLostError` says
 * it is not (released, expired, taken over, already resumed — a token resumes once — or an
 * owner id that was never there).
 *
 * @module
 */
import type { Grant, GrantData, LockBackend, LockRequest } from './backend.js';
import type { Capabilities } from './capabilities.js';
import { publish } from './diagnostics.js';
import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import { LockLostError } from './errors/lock-lost-error.js';
import { now } from './timing.js';
import type { LockHandle, LockKind } from './types.js';

const tokenPrefix = 'lk1.';
const kinds: readonly LockKind[] = ['mutex', 'read', 'write', 'semaphore'];

/** What a token says (JSON; maxCount only for a semaphore, the fencing token as a string). */
interface TokenBody {
  readonly backend: string;
  readonly namespace: string;
  readonly kind: LockKind;
  readonly name: string;
  readonly maxCount: number;
  readonly permits?: number | undefined;
  readonly leaseMs?: number | undefined;
  readonly autoExtend?: boolean | undefined;
  readonly fencingToken: string;
  readonly durationMs?: number | undefined;
  readonly grant: GrantData;
}

/** The primitive a token is resumed through. */
export interface ResumeTarget {
  /** The kinds it accepts (a read-write lock: read and write). */
  readonly kinds: readonly LockKind[];
  readonly name: string;
  /** A semaphore's maxCount (the token's must match); 1 for the other primitives. */
  readonly maxCount: number;
}

/** What resuming needs from the provider. */
export interface ResumeHost<G extends Grant> {
  readonly backend: LockBackend<G>;
  readonly namespace: string;
  /** The resumer's owner label, recorded with the request (see `LockRequest.owner`). */
  readonly owner?: string | undefined;
  assertOpen(): void;
  adopt(request: LockRequest, grant: G): LockHandle | Promise<never>;
  track<T>(work: Promise<T>): Promise<T>;
}

/** Throws unless the backend hands holds over. */
export function assertHandOver(
  what: string,
  backend: { readonly backend: string; readonly capabilities: Capabilities },
): void {
  if (backend.capabilities.handOver) return;
  throw new InvalidArgumentError(
    `${what} needs capabilities.handOver, which is false on "${backend.backend}"`,
  );
}

/** The token of a hold (the handle has checked that it is live). */
export function exportToken<G extends Grant>(
  backend: LockBackend<G>,
  request: LockRequest,
  grant: G,
  durationMs: number | undefined,
): string {
  assertHandOver('export()', backend);
  if (!backend.exportGrant || !backend.resumeGrant) {
    throw new InvalidArgumentError(`Backend "${backend.backend}" does not implement hand-over`);
  }
  const body: TokenBody = {
    backend: backend.backend,
    namespace: request.namespace,
    kind: request.kind,
    name: request.name,
    maxCount: request.kind === 'semaphore' ? request.maxCount : 1,
    permits: request.permits,
    leaseMs: request.leaseMs,
    autoExtend: request.autoExtend,
    fencingToken: grant.fencingToken.toString(),
    durationMs,
    grant: backend.exportGrant(request, grant),
  };
  return tokenPrefix + Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** Resumes `token` through `target`: checks before any I/O, then the backend on the server. */
export async function resumeHandle<G extends Grant>(
  host: ResumeHost<G>,
  target: ResumeTarget,
  token: unknown,
): Promise<LockHandle> {
  const { backend } = host;
  const started = now();
  assertHandOver('resume()', backend);
  host.assertOpen();
  const body = decode(token);
  const refuse = (why: string): never => {
    throw new InvalidArgumentError(`Cannot resume this token on "${target.name}": ${why}`);
  };
  if (body.backend !== host.backend.backend) refuse(`it is a "${body.backend}" hold`);
  if (body.namespace !== host.namespace) refuse(`it is of namespace "${body.namespace}"`);
  if (body.name !== target.name) refuse('it is a hold of another lock');
  if (!target.kinds.includes(body.kind)) refuse(`it is a ${body.kind} hold`);
  if (body.kind === 'semaphore' && body.maxCount !== target.maxCount) {
    refuse(`its maxCount is ${body.maxCount}`);
  }
  const maxCount = body.kind === 'read' ? Number.POSITIVE_INFINITY : body.maxCount;
  const request: LockRequest = {
    name: body.name,
    namespace: body.namespace,
    kind: body.kind,
    maxCount,
    owner: host.owner,
    ...(body.permits !== undefined && { permits: body.permits }),
    ...(body.leaseMs !== undefined && { leaseMs: body.leaseMs }),
    ...(body.autoExtend !== undefined && { autoExtend: body.autoExtend }),
  };
  const resume = backend.resumeGrant as NonNullable<LockBackend<G>['resumeGrant']>;
  const fencingToken = BigInt(body.fencingToken);
  const grant = await host.track(
    resume.call(backend, request, body.grant, fencingToken, body.durationMs),
  );
  if (!grant) {
    throw new LockLostError(
      body.name,
      'the handed-over hold is gone (released, expired or held by another owner)',
    );
  }
  const handle = await host.adopt(request, grant);
  // A resume is this provider's grant: subscribers see it like an acquire.
  publish('acquire', () => ({
    backend: backend.backend,
    name: request.name,
    kind: request.kind,
    handle,
    fencingToken,
    waitedMs: now() - started,
  }));
  return handle;
}

/** Parses a token, refusing anything that is not one lockkit wrote. */
function decode(token: unknown): TokenBody {
  const garbled = (): never => {
    throw new InvalidArgumentError('Not a lockkit hand-over token (garbled or of another version)');
  };
  if (typeof token !== 'string' || !token.startsWith(tokenPrefix)) return garbled();
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(token.slice(tokenPrefix.length), 'base64url').toString());
  } catch {
    return garbled();
  }
  if (!isTokenBody(body)) return garbled();
  return body;
}

const optional = (value: unknown, type: string): boolean =>
  value === undefined || typeof value === type;
const count = (value: unknown): boolean =>
  typeof value === 'number' && Number.isInteger(value) && value >= 1;

function isTokenBody(value: unknown): value is TokenBody {
  if (typeof value !== 'object' || value === null) return false;
  const body = value as Record<string, unknown>;
  const grant = body['grant'];
  return (
    typeof body['backend'] === 'string' &&
    typeof body['namespace'] === 'string' &&
    kinds.includes(body['kind'] as LockKind) &&
    typeof body['name'] === 'string' &&
    count(body['maxCount']) &&
    (body['permits'] === undefined || count(body['permits'])) &&
    (body['leaseMs'] === undefined || count(body['leaseMs'])) &&
    optional(body['autoExtend'], 'boolean') &&
    typeof body['fencingToken'] === 'string' &&
    /^(0|[1-9][0-9]*)$/.test(body['fencingToken']) &&
    (body['durationMs'] === undefined ||
      (typeof body['durationMs'] === 'number' && body['durationMs'] > 0)) &&
    typeof grant === 'object' &&
    grant !== null &&
    !Array.isArray(grant) &&
    Object.values(grant).every((item) => ['string', 'number', 'boolean'].includes(typeof item))
  );
}

/** Why a handle cannot be exported: it was lost (its reason) or let go of. */
export function notExportable(name: string, lost: LockLostError | undefined): Error {
  return (
    lost ??
    new InvalidArgumentError(`Lock "${name}": export() of a handle that was released or exported`)
  );
}

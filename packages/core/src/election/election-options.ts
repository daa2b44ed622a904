import { hostname } from 'node:os';
import { booleanOption, checkOptionKeys, stringOption } from '../option-validation.js';
import type { ElectionEventsOptions, ElectionOptions } from '../types.js';
import { validateSignal } from '../validation.js';

/** The mutex an election named `name` runs on (documented: tools such as `lockkit inspect` use it). */
export function electionLockName(name: string): string {
  return `election:${name}`;
}

/** Election options after validation. */
export interface ValidElectionOptions {
  readonly owner: string;
  readonly recampaign: boolean;
}

let defaultOwner: string | undefined;

/** Checks `createElection()` options (an `InvalidArgumentError` before any I/O). */
export function validateElectionOptions(
  options: ElectionOptions | undefined,
): ValidElectionOptions {
  if (options === undefined) return { owner: ownerLabel(), recampaign: false };
  checkOptionKeys(options, ['owner', 'recampaign'], 'election');
  return {
    owner: options.owner === undefined ? ownerLabel() : stringOption('owner', options.owner, ''),
    recampaign: booleanOption('recampaign', options.recampaign, false),
  };
}

/** Checks `events()` options; resolves the signal. */
export function validateEventsOptions(
  options: ElectionEventsOptions | undefined,
): AbortSignal | undefined {
  if (options === undefined) return undefined;
  checkOptionKeys(options, ['signal'], 'election events');
  return validateSignal(options.signal);
}

/** `<hostname>:<pid>`, read once. */
function ownerLabel(): string {
  defaultOwner ??= `${hostname()}:${process.pid}`;
  return defaultOwner;
}

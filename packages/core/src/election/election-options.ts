import { defaultOwnerLabel } from '../inspection.js';
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

/** Checks `createElection()` options (an `InvalidArgumentError` before any I/O). */
export function validateElectionOptions(
  options: ElectionOptions | undefined,
): ValidElectionOptions {
  if (options === undefined) return { owner: defaultOwnerLabel(), recampaign: false };
  checkOptionKeys(options, ['owner', 'recampaign'], 'election');
  return {
    owner:
      options.owner === undefined ? defaultOwnerLabel() : stringOption('owner', options.owner, ''),
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

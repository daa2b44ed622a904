import { isLockError, LockError } from './lock-error.js';

/** A method was called on a provider after `close()`. Code `PROVIDER_CLOSED`. */
export class ProviderClosedError extends LockError {
  constructor(backend: string) {
    super('PROVIDER_CLOSED', `The ${backend} lock provider is closed`);
    this.name = 'ProviderClosedError';
  }

  static override isInstance(value: unknown): value is ProviderClosedError {
    return isLockError(value, 'PROVIDER_CLOSED');
  }
}

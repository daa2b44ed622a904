export { type ApiFuzzOptions, fuzzApiSequences } from './api-fuzz.js';
export { type ChildHolder, spawnHolder } from './child/spawn-holder.js';
export { describeLockProvider } from './describe-lock-provider.js';
export type {
  ChildProviderSpec,
  ConformanceFaults,
  ConformanceOptions,
  OutageFaults,
  ProviderOptions,
} from './options.js';
export { abortedWithin, type LockSpec, waitFor } from './support.js';

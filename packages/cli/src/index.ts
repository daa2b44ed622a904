export type {
  CommandName,
  DemoCommand,
  InspectCommand,
  Invocation,
  LockTarget,
  RunCommand,
} from './cli-arguments.js';
export { parseCommandLine } from './cli-arguments.js';
export { exitCodes } from './exit-codes.js';
export { helpText } from './help-text.js';
export { main } from './main.js';
export type { Output } from './output.js';
export { UsageError } from './usage-error.js';

export type {
  CommandName,
  DemoCommand,
  ElectCommand,
  Environment,
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
export { UrlFileError } from './url-file-error.js';
export { UsageError } from './usage-error.js';

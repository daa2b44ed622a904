import { describeFileConformance } from './file-conformance.js';

// The same suite with the asynchronous (thread pool) file I/O, in its own file: vitest runs it
// next to the synchronous one.
describeFileConformance('async');

import { describeFencingConformance } from './fencing-conformance.js';

// The conformance suite with `fencing: 'table'`.
await describeFencingConformance('table');

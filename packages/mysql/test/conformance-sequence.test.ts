import { describeFencingConformance } from './fencing-conformance.js';

// The conformance suite with `fencing: 'sequence'`.
await describeFencingConformance('sequence');

import { describeFileConformance } from './file-conformance.js';

describeFileConformance('sync');

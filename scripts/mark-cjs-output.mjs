// Run by each package's build after `tsc -p tsconfig.cjs.json`: marks dist/cjs as CommonJS
// (the package itself is "type": "module"), so Node and TypeScript read the .js and .d.ts
// files there as CommonJS. See docs/adr/0009-dual-esm-and-commonjs.md.
import { writeFileSync } from 'node:fs';

writeFileSync('dist/cjs/package.json', `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);

// Every source map the installed lockkit packages ship must carry the source it maps to
// (the packages do not ship src/), and no declaration map may point at missing files.
'use strict';
const { readdirSync, readFileSync, existsSync } = require('node:fs');
const { join, dirname, resolve } = require('node:path');

const roots = [
  'core',
  'file',
  'redis',
  'postgres',
  'mysql',
  'zookeeper',
  'etcd',
  'cli',
  'opentelemetry',
]
  .map((name) => join('node_modules', '@lockkit', name))
  .concat(join('node_modules', 'lockkit'));
let maps = 0;
const problems = [];
function visit(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) visit(path);
    else if (entry.name.endsWith('.map')) {
      maps += 1;
      const map = JSON.parse(readFileSync(path, 'utf8'));
      map.sources.forEach((source, index) => {
        const inline = typeof map.sourcesContent?.[index] === 'string';
        if (!inline && !existsSync(resolve(dirname(path), source))) {
          problems.push(`${path}: ${source} is neither inlined nor shipped`);
        }
      });
    }
  }
}
for (const root of roots) visit(join(root, 'dist'));
if (problems.length > 0) {
  console.error(problems.slice(0, 20).join('\n'));
  process.exit(1);
}
console.log(`${maps} source maps, every source inlined or shipped`);

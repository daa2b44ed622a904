#!/usr/bin/env node
// Copies this example out of the lockkit repository into a project of its own:
//
//   node examples/nestjs-inventory/copy-out.mjs <destination> [--version <range>] [--tarballs <dir>]
//
// The copy's package.json names published versions instead of `workspace:*`: `^<version>` of
// each package in this repository (or --version), or, with --tarballs, the `pnpm pack`
// tarballs in <dir> (every lockkit package found there, also the ones needed indirectly, goes
// into `overrides`). @lockkit/testkit is not published: without --tarballs the copy leaves out
// the tests, which need it. node_modules, dist and the repository's lint config stay behind.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repository = resolve(here, '../..');
const [destination, ...rest] = process.argv.slice(2);
const option = (name) => {
  const at = rest.indexOf(name);
  return at === -1 ? undefined : rest[at + 1];
};
if (!destination) {
  console.error('usage: copy-out.mjs <destination> [--version <range>] [--tarballs <dir>]');
  process.exit(64);
}
const tarballDir = option('--tarballs') && resolve(option('--tarballs'));
const version = option('--version');

/** Versions and privacy of the packages in this repository, by package name. */
function workspacePackages() {
  const packages = new Map();
  const dir = join(repository, 'packages');
  if (!existsSync(dir)) return packages;
  for (const name of readdirSync(dir)) {
    const manifest = join(dir, name, 'package.json');
    if (!existsSync(manifest)) continue;
    const json = JSON.parse(readFileSync(manifest, 'utf8'));
    packages.set(json.name, { version: json.version, private: json.private === true });
  }
  return packages;
}

/** `pnpm pack` names @scope/name-1.2.3 as scope-name-1.2.3.tgz. */
function tarballs() {
  const found = new Map();
  for (const file of readdirSync(tarballDir)) {
    for (const [name, info] of workspacePackages()) {
      const expected = `${name.replace(/^@/, '').replace('/', '-')}-${info.version}.tgz`;
      if (file === expected) found.set(name, `file:${join(tarballDir, file)}`);
    }
  }
  return found;
}

const packages = workspacePackages();
const packed = tarballDir ? tarballs() : new Map();
const manifest = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
let withTests = true;
for (const field of ['dependencies', 'devDependencies']) {
  for (const [name, spec] of Object.entries(manifest[field] ?? {})) {
    if (!spec.startsWith('workspace:')) continue;
    const info = packages.get(name);
    if (tarballDir) {
      if (!packed.has(name)) throw new Error(`no tarball for ${name} in ${tarballDir}`);
      manifest[field][name] = packed.get(name);
    } else if (info?.private) {
      delete manifest[field][name]; // not on the registry
      withTests = false;
    } else if (version || info) {
      manifest[field][name] = version ?? `^${info.version}`;
    } else {
      throw new Error(`${name}: not in a lockkit checkout; pass --version <range>`);
    }
  }
}
if (tarballDir) manifest.overrides = Object.fromEntries(packed);
if (!withTests) {
  delete manifest.scripts.test;
  delete manifest.devDependencies.vitest;
}

mkdirSync(destination, { recursive: true });
const files = ['README.md', 'tsconfig.json', 'tsconfig.build.json', 'src'];
if (withTests) files.push('vitest.config.ts', 'test');
for (const file of files) cpSync(join(here, file), join(destination, file), { recursive: true });
writeFileSync(join(destination, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(
  `copied to ${resolve(destination)}${withTests ? '' : ' (without the tests: @lockkit/testkit is not published)'}; ` +
    `now: cd ${destination} && npm install && npm run build`,
);

// Links in the docs that work where they are read:
// - README.md, docs/** and the examples' READMEs are read in the repository: every relative
//   link resolves to a file or directory that exists, and an #anchor into a Markdown file
//   names one of its headings.
// - packages/*/README.md are read on the npm registry page too, where a relative link only
//   works by accident: they link repository files as https://github.com/lockkit/lockkit/blob/main/…
//   and have no relative links but #anchors.
// - Every link to https://github.com/lockkit/lockkit/(blob|tree)/main/… names a file that exists
//   here, and its #anchor a heading.
// Used by scripts/doc-snippets.mjs; `node scripts/doc-links.mjs` runs it alone.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchorsOf(path) {
  const anchors = new Set();
  let inFence = false;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    const heading = !inFence && /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]);
    let name = base;
    for (let n = 1; anchors.has(name); n++) name = `${base}-${n}`;
    anchors.add(name);
  }
  return anchors;
}

/** Inline links `[text](target)` outside code, with their line numbers. */
function linksOf(text) {
  const links = [];
  let inFence = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*```/.test(line)) inFence = !inFence;
    if (inFence) return;
    const withoutCode = line.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
    for (const match of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      links.push({ target: match[1], line: index + 1 });
    }
  });
  return links;
}

// The Markdown files users read: README.md, docs, and the READMEs of packages and examples.
export function markdownFiles(root) {
  const files = ['README.md'];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs');
  for (const group of ['packages', 'examples']) {
    for (const name of readdirSync(join(root, group))) {
      if (existsSync(join(root, group, name, 'README.md')))
        files.push(join(group, name, 'README.md'));
    }
  }
  return files;
}

const repositoryUrl = 'https://github.com/lockkit/lockkit';
const repositoryLink = /^https:\/\/github\.com\/lockkit\/lockkit\/(?:blob|tree)\/main\/(.*)$/;

export function checkLinks(root, files) {
  const errors = [];
  for (const file of files) {
    const packageDir = /^packages\/[^/]+\/README\.md$/.test(file) ? dirname(file) : undefined;
    for (const { target, line } of linksOf(readFileSync(join(root, file), 'utf8'))) {
      const where = `${file}:${line}: link ${target}`;
      const repositoryFile = repositoryLink.exec(target);
      if (!repositoryFile && /^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // other https:, mailto:, …
      if (packageDir && !repositoryFile && !target.startsWith('#')) {
        errors.push(
          `${where} is relative: dead on the npm page; link ${repositoryUrl}/blob/main/…`,
        );
        continue;
      }
      const [path, anchor] = (repositoryFile ? repositoryFile[1] : target).split('#');
      const base = repositoryFile ? root : join(root, dirname(file));
      const resolved = path === '' ? join(root, file) : resolve(base, decodeURI(path));
      if (!existsSync(resolved)) {
        errors.push(`${where}: no such file in the repository`);
        continue;
      }
      if (
        anchor &&
        statSync(resolved).isFile() &&
        resolved.endsWith('.md') &&
        !anchorsOf(resolved).has(anchor)
      ) {
        errors.push(`${where}: no heading #${anchor} in ${relative(root, resolved)}`);
      }
    }
  }
  return errors;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const errors = checkLinks(root, markdownFiles(root));
  for (const error of errors) console.error(error);
  process.exit(errors.length > 0 ? 1 : 0);
}

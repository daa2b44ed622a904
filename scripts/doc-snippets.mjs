#!/usr/bin/env node
// Docs that cannot rot: extracts every code block from README.md, docs/**/*.md,
// packages/*/README.md and examples/*/README.md, type-checks each TypeScript/JavaScript block
// with `tsc --strict` against the built packages, runs the ones that can run (throwaway
// servers from @lockkit/testkit for the ones that read a server URL from the environment),
// checks shell blocks with `bash -n`, and checks links (see checkLinks below).
//
//   node scripts/doc-snippets.mjs [--packages-from <dir>] [--no-run] [--keep]
//
// --packages-from <dir>  where `lockkit`, `@lockkit/*`, `typescript` and `@types/node` resolve
//                        from: a directory with a node_modules (an npm-installed app). Default:
//                        this workspace (packages/* by name, the root's typescript and types).
// --no-run               type-check only; nothing is started or run.
// --keep                 keep the temporary directory with the extracted snippets.
//
// Markers in the Markdown (HTML comments, invisible on GitHub and npm):
//   <!-- snippet-preamble            once per file: TypeScript put before every block of the
//   const ledger = …;                 file — the application code the snippets stand for
//   -->                               (real code, so the snippets also run)
//   <!-- snippet-context … -->       right before one block: code put before that block only
//   <!-- snippet: typecheck-only -->  right before a block: compiled, not run (names a host
//                                     that does not exist here, or needs a full test runner)
//   <!-- snippet: fragment -->       right before a block: neither compiled nor run
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkLinks, markdownFiles } from './doc-links.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args[at + 1];
};
const packagesFrom = option('--packages-from');
const run = !args.includes('--no-run');
const keep = args.includes('--keep');
const runTimeoutMs = 60_000;

// ---------- collect ----------

// Files whose snippets are not checked yet, with the reason (printed on every run).
const notChecked = new Map([]);
// An npm-installed app has only what it installed: private packages (@lockkit/bench) never,
// and the test-time packages (@lockkit/conformance, @lockkit/testkit) only if it chose to.
if (packagesFrom) {
  for (const name of [
    ...readdirSync(join(root, 'packages')).map((dir) => `packages/${dir}`),
    ...readdirSync(join(root, 'examples')).map((dir) => `examples/${dir}`),
  ]) {
    const manifest = join(root, name, 'package.json');
    if (!existsSync(manifest)) continue;
    const { name: packageName, private: isPrivate } = JSON.parse(readFileSync(manifest, 'utf8'));
    if (isPrivate) {
      notChecked.set(`${name}/README.md`, 'a private package, not installed with --packages-from');
    } else if (!existsSync(join(packagesFrom, 'node_modules', packageName, 'package.json'))) {
      notChecked.set(`${name}/README.md`, `${packageName} is not installed in ${packagesFrom}`);
    }
  }
}

const codeLanguages = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs']);
const shellLanguages = new Set(['sh', 'bash', 'shell']);

/** Code blocks of one Markdown file, with the markers that apply to each. */
function extract(file) {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks = [];
  let preamble = '';
  let pending = { mode: 'run', context: '' };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    const comment = /^<!--\s*(snippet-preamble|snippet-context)\s*([\s\S]*)$/.exec(line);
    if (comment) {
      const body = [comment[2]];
      while (!body.at(-1).includes('-->') && i + 1 < lines.length) body.push(lines[++i]);
      const code = body
        .join('\n')
        .replace(/-->\s*$/, '')
        .trim();
      if (comment[1] === 'snippet-preamble') preamble = code;
      else pending.context = code;
      continue;
    }
    const marker = /^<!--\s*snippet:\s*(fragment|typecheck-only)\s*-->$/.exec(line);
    if (marker) {
      pending.mode = marker[1];
      continue;
    }
    const fence = /^(\s*)(`{3,})(\S*)/.exec(lines[i]);
    if (!fence) {
      if (line !== '') pending = { mode: 'run', context: '' };
      continue;
    }
    const [, indent, ticks, language] = fence;
    const start = i + 1;
    const body = [];
    while (++i < lines.length && !lines[i].trim().startsWith(ticks))
      body.push(lines[i].slice(indent.length));
    blocks.push({ file, line: start, language, code: body.join('\n'), ...pending });
    pending = { mode: 'run', context: '' };
  }
  return blocks.map((block) => ({ ...block, preamble }));
}

// ---------- the temporary project ----------

function workspaceModules(dir) {
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, '@lockkit'), { recursive: true });
  mkdirSync(join(modules, '@types'), { recursive: true });
  const workspace = ['packages', 'examples'].flatMap((group) =>
    readdirSync(join(root, group)).map((name) => join(root, group, name)),
  );
  for (const packageDir of workspace) {
    const manifest = join(packageDir, 'package.json');
    if (!existsSync(manifest)) continue;
    const { name: packageName } = JSON.parse(readFileSync(manifest, 'utf8'));
    symlinkSync(packageDir, join(modules, packageName), 'dir');
  }
  // the client libraries, as an app that uses the backends has them (and the OpenTelemetry
  // API and SDK parts an app that uses @lockkit/opentelemetry has)
  const clients = {
    postgres: ['pg', '@types/pg'],
    redis: ['ioredis'],
    mysql: ['mysql2'],
    opentelemetry: [
      '@opentelemetry/api',
      '@opentelemetry/context-async-hooks',
      '@opentelemetry/exporter-prometheus',
      '@opentelemetry/sdk-metrics',
      '@opentelemetry/sdk-trace-base',
    ],
  };
  for (const [name, libraries] of Object.entries(clients)) {
    for (const library of libraries) {
      const target = join(root, 'packages', name, 'node_modules', library);
      if (!existsSync(target)) continue;
      mkdirSync(dirname(join(modules, library)), { recursive: true });
      symlinkSync(target, join(modules, library), 'dir');
    }
  }
  symlinkSync(join(root, 'node_modules/@types/node'), join(modules, '@types/node'), 'dir');
  symlinkSync(join(root, 'node_modules/typescript'), join(modules, 'typescript'), 'dir');
  // vitest for the testkit README's setup snippet (a dev dependency of testkit)
  symlinkSync(join(root, 'node_modules/vitest'), join(modules, 'vitest'), 'dir');
  return modules;
}

function prepareProject(snippets) {
  const dir = mkdtempSync(join(tmpdir(), 'lockkit-doc-snippets-'));
  const modules = packagesFrom ? resolve(packagesFrom, 'node_modules') : workspaceModules(dir);
  if (packagesFrom) symlinkSync(modules, join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
  writeFileSync(
    join(dir, 'tsconfig.json'),
    `${JSON.stringify(
      {
        compilerOptions: {
          strict: true,
          target: 'es2022', // lowers `await using`, which Node 20 and 22 cannot parse
          lib: ['es2022', 'esnext.disposable'],
          module: 'nodenext',
          types: ['node'],
          skipLibCheck: false,
          allowJs: true,
          checkJs: true,
          outDir: 'out',
          rootDir: 'src',
          sourceMap: false,
        },
        include: ['src'],
      },
      null,
      2,
    )}\n`,
  );
  mkdirSync(join(dir, 'src'));
  for (const snippet of snippets) {
    const head = [snippet.preamble, snippet.context].filter(Boolean).join('\n');
    snippet.headLines = head === '' ? 0 : head.split('\n').length;
    const js = snippet.language !== 'ts' && snippet.language !== 'typescript';
    snippet.source = `${snippet.file.replace(/[/.]/g, '_')}_${snippet.line}.${js ? 'js' : 'ts'}`;
    // `export {}` makes each file a module of its own (top-level await, no shared names)
    writeFileSync(
      join(dir, 'src', snippet.source),
      `${head}${head ? '\n' : ''}${snippet.code}\nexport {};\n`,
    );
  }
  return { dir, modules };
}

// ---------- type-check ----------

/** One tsc run: reports every error and emits the JavaScript that runSnippets runs. */
function typecheck(dir, modules, snippets) {
  const tsc = join(modules, 'typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', '.', '--pretty', 'false'], {
    cwd: dir,
    encoding: 'utf8',
  });
  const bySource = new Map(snippets.map((snippet) => [snippet.source, snippet]));
  const errors = [];
  for (const line of `${result.stdout}${result.stderr}`.split('\n')) {
    const match = /^src\/([^()]+)\((\d+),(\d+)\): (.*)$/.exec(line);
    const snippet = match && bySource.get(match[1]);
    if (!snippet) {
      if (/^\s/.test(line) && errors.length > 0) errors[errors.length - 1] += `\n  ${line.trim()}`;
      else if (line.trim()) errors.push(`tsc: ${line}`);
      continue;
    }
    const at = Number(match[2]) - snippet.headLines;
    const where =
      at > 0
        ? `${snippet.file}:${snippet.line + at}`
        : `${snippet.file}:${snippet.line} (preamble)`;
    errors.push(`${where}: ${match[4]}`);
    snippet.failed = true;
  }
  if (result.status !== 0 && errors.length === 0) errors.push(`tsc exited ${result.status}`);
  return errors;
}

// ---------- run ----------

/** Servers a snippet needs, from the environment variables it reads. */
const serverVariables = {
  DATABASE_URL: 'postgres',
  REDIS_URL: 'redis',
  MYSQL_URL: 'mariadb',
  ZOOKEEPER_HOSTS: 'zookeeper',
  ETCD_ENDPOINTS: 'etcd',
};

async function startServers(kinds) {
  const testkitEntry = join(root, 'packages/testkit/dist/index.js');
  const testkit = await import(pathToFileURL(testkitEntry).href);
  const starters = {
    postgres: () => testkit.startPostgres(),
    redis: () => testkit.startRedisServer(),
    mariadb: () => testkit.startMariaDb(),
    zookeeper: () => testkit.startZooKeeper(),
    etcd: () => testkit.startEtcd(),
  };
  const servers = {};
  const stop = () => Promise.all(Object.values(servers).map((server) => server.stop()));
  try {
    for (const kind of kinds) servers[kind] = await starters[kind]();
  } catch (error) {
    await stop();
    throw error;
  }
  const environment = {
    DATABASE_URL: servers.postgres?.url,
    REDIS_URL: servers.redis?.url,
    MYSQL_URL: servers.mariadb?.url,
    ZOOKEEPER_HOSTS: servers.zookeeper && `${servers.zookeeper.host}:${servers.zookeeper.port}`,
    ETCD_ENDPOINTS: servers.etcd && `${servers.etcd.host}:${servers.etcd.port}`,
  };
  return { environment, stop };
}

async function runSnippets(dir, snippets) {
  const runnable = snippets.filter((snippet) => snippet.mode === 'run' && !snippet.failed);
  const needs = (snippet) =>
    [
      ...`${snippet.preamble}\n${snippet.context}\n${snippet.code}`.matchAll(
        /process\.env\.(\w+)/g,
      ),
    ].map((m) => m[1]);
  const kinds = new Set(
    runnable.flatMap((snippet) =>
      needs(snippet)
        .map((name) => serverVariables[name])
        .filter(Boolean),
    ),
  );
  const servers =
    kinds.size > 0 ? await startServers(kinds) : { environment: {}, stop: async () => {} };
  const errors = [];
  try {
    for (const snippet of runnable) {
      const workDir = mkdtempSync(join(dir, 'run-'));
      const env = {
        ...process.env,
        ...Object.fromEntries(Object.entries(servers.environment).filter(([, value]) => value)),
        LOCK_URL: pathToFileURL(join(workDir, 'locks')).href,
      };
      const script = join(dir, 'out', snippet.source.replace(/\.ts$/, '.js'));
      const result = spawnSync(process.execPath, [script], {
        cwd: workDir,
        env,
        encoding: 'utf8',
        timeout: runTimeoutMs,
      });
      snippet.ran = true;
      if (result.status !== 0) {
        const why = result.error ? String(result.error) : `exit ${result.status ?? result.signal}`;
        errors.push(
          `${snippet.file}:${snippet.line}: running it failed (${why})\n${indent(result.stderr || result.stdout)}`,
        );
      }
    }
  } finally {
    await servers.stop();
  }
  return errors;
}

const indent = (text) =>
  text
    .trim()
    .split('\n')
    .slice(0, 15)
    .map((line) => `    ${line}`)
    .join('\n');

// ---------- shell ----------

function checkShell(blocks) {
  const errors = [];
  for (const block of blocks) {
    const result = spawnSync('bash', ['-n'], { input: block.code, encoding: 'utf8' });
    if (result.status !== 0)
      errors.push(`${block.file}:${block.line}: bash -n: ${result.stderr.trim()}`);
  }
  return errors;
}

// ---------- main ----------

const files = markdownFiles(root);
const blocks = files.flatMap((file) =>
  extract(file).map((block) => (notChecked.has(file) ? { ...block, mode: 'not checked' } : block)),
);
const code = blocks.filter(
  (block) =>
    codeLanguages.has(block.language) && block.mode !== 'fragment' && block.mode !== 'not checked',
);
const shell = blocks.filter(
  (block) =>
    shellLanguages.has(block.language) && block.mode !== 'fragment' && block.mode !== 'not checked',
);
const { dir, modules } = prepareProject(code);
const errors = [];
try {
  errors.push(...typecheck(dir, modules, code));
  if (run) errors.push(...(await runSnippets(dir, code)));
  errors.push(...checkShell(shell));
  errors.push(...checkLinks(root, files));
} finally {
  if (keep) console.log(`snippets kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

console.log(
  `doc snippets (packages from ${packagesFrom ? resolve(packagesFrom) : 'the workspace'}):`,
);
for (const file of files) {
  const mine = blocks.filter((block) => block.file === file);
  if (mine.length === 0) continue;
  const count = (test) => mine.filter(test).length;
  const parts = [
    `${count((b) => code.includes(b))} type-checked`,
    `${count((b) => b.ran)} run`,
    `${count((b) => shell.includes(b))} shell`,
    `${count((b) => b.mode === 'fragment')} fragment`,
    `${count((b) => b.mode === 'not checked')} not checked`,
    `${count((b) => !codeLanguages.has(b.language) && !shellLanguages.has(b.language) && b.mode === 'run')} other`,
  ];
  console.log(`  ${relative('.', join(root, file)) || file}: ${parts.join(', ')}`);
}
for (const [file, why] of notChecked) console.log(`  not checked: ${file} (${why})`);
const total = (test) => blocks.filter(test).length;
console.log(
  `${code.length} TypeScript/JavaScript snippets type-checked, ${total((b) => b.ran)} run, ` +
    `${shell.length} shell blocks checked, ${total((b) => b.mode === 'fragment')} fragments, in ${files.length} files`,
);
if (errors.length > 0) {
  console.error(`\n${errors.length} problem(s):\n${errors.join('\n')}`);
  process.exit(1);
}
console.log('all doc snippets and links are fine');

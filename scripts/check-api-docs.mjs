#!/usr/bin/env node
// The API reference in docs/api/ is committed (Markdown from TypeDoc, so it reads on GitHub and
// ships with the docs without a local build). This check, part of npm test's docs step, generates it
// again into a temporary folder and fails when the committed copy differs: run `npm run docs:api`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const committed = join(root, 'docs', 'api');

/** Every file below `dir`, as paths relative to it. */
function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) =>
      relative(dir, join(entry.parentPath ?? entry.path, entry.name))
        .split('\\')
        .join('/'),
    )
    .sort();
}

const fresh = mkdtempSync(join(tmpdir(), 'infergate-api-docs-'));
try {
  const typedoc = join(
    root,
    'node_modules',
    '.bin',
    process.platform === 'win32' ? 'typedoc.cmd' : 'typedoc',
  );
  const run = spawnSync(typedoc, ['--logLevel', 'Warn', '--out', fresh], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) {
    console.error(`typedoc failed (exit ${run.status ?? run.signal}): the API reference cannot be checked`);
    process.exit(1);
  }
  const expected = files(fresh);
  const actual = files(committed);
  const names = new Set([...expected, ...actual]);
  const stale = [...names].filter(
    (name) =>
      !expected.includes(name) ||
      !actual.includes(name) ||
      !readFileSync(join(fresh, name)).equals(readFileSync(join(committed, name))),
  );
  // A type alias of a zod schema's input shows as `z.input<typeof schema>` and lists no field; an
  // interface that extends it lists every field with its doc comment and @default.
  const opaque = expected.flatMap((name) =>
    readFileSync(join(fresh, name), 'utf8')
      .split('\n')
      .filter((line) => /^> \*\*\w+\*\* = `z\.input`/.test(line))
      .map((line) => `${name}: ${line.slice(2)}`),
  );
  if (opaque.length > 0) {
    console.error(
      `the API reference shows no fields for these options types (declare each as \`interface X extends z.input<typeof schema> {}\`):\n${opaque.join('\n')}`,
    );
    process.exit(1);
  }
  if (stale.length > 0) {
    console.error(
      `docs/api is out of date (${stale.length} file(s) differ, e.g. ${stale[0]}): run npm run docs:api`,
    );
    process.exit(1);
  }
  console.log(`docs/api is current (${expected.length} files)`);
} finally {
  rmSync(fresh, { recursive: true, force: true });
}

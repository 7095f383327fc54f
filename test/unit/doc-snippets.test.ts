// Every ```ts block of README.md, docs/**/*.md and packages/*/README.md type-checks against the workspace packages (from source, as the test command builds them), and the
// documents that can run against the reference server run. Blocks are found automatically: a block
// added to any of those files is checked by the next run.
//
// A document reads as one program: a block may use what an earlier block of the same document
// declared or imported (the way getting-started builds up a `client`). Names a document only assumes
// (`chat`, `request`, a logger) are declared in PRELUDES below, never in the docs themselves.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { format } from 'node:util';
import { startTestServer, type TestServer } from '@infergate/testing';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PRELUDES, RUNNABLE } from './doc-snippet-preludes.js';
import { type DocProgram, extractDocProgram } from './doc-snippet-program.js';

const root = join(import.meta.dirname, '..', '..');
const outDir = join(root, 'test', 'unit', '.snippets', 'docs');

function markdownFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'api' && entry.name !== 'node_modules') walk(path);
      else if (entry.isFile() && entry.name.endsWith('.md')) found.push(path);
    }
  };
  found.push(join(root, 'README.md'));
  walk(join(root, 'docs'));
  for (const name of readdirSync(join(root, 'packages'))) {
    const readme = join(root, 'packages', name, 'README.md');
    if (existsSync(readme)) found.push(readme);
  }
  return found.map((path) => relative(root, path).split('\\').join('/')).sort();
}

const programs: DocProgram[] = markdownFiles()
  .map((doc) => extractDocProgram(doc, readFileSync(join(root, doc), 'utf8'), PRELUDES[doc] ?? ''))
  .filter((program) => program.blocks.length > 0);

/** Type errors per document, as "doc.md:line: message" (line in the markdown file). */
const errors = new Map<string, string[]>();

function typeCheck(): void {
  rmSync(outDir, { recursive: true, force: true });
  const files: string[] = [];
  for (const program of programs) {
    const file = join(outDir, `${program.doc.replace(/[/.]/g, '_')}.ts`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, program.code);
    files.push(file);
  }
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (config === undefined) throw new Error('tsconfig.json could not be read');
  const program = ts.createProgram(files, { ...config.options, noEmit: true });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  for (const [index, file] of files.entries()) {
    const doc = programs[index] as DocProgram;
    const messages = diagnostics
      .filter((diagnostic) => diagnostic.file?.fileName === file)
      .map((diagnostic) => {
        const { line } = (diagnostic.file as ts.SourceFile).getLineAndCharacterOfPosition(
          diagnostic.start ?? 0,
        );
        const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
        return `${doc.doc}:${doc.markdownLine(line)}: TS${diagnostic.code} ${text}`;
      });
    errors.set(doc.doc, messages);
  }
  // Errors outside the generated files (a package that does not compile) would hide in the count above.
  const elsewhere = diagnostics.filter((diagnostic) => !files.includes(diagnostic.file?.fileName ?? ''));
  errors.set(
    '(packages)',
    elsewhere.map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')),
  );
}

describe('code blocks in the docs', () => {
  beforeAll(typeCheck, 180_000);

  it('finds the blocks (README, docs/, package READMEs)', () => {
    const docs = programs.map((program) => program.doc);
    expect(docs).toEqual(expect.arrayContaining(['README.md', 'docs/getting-started.md']));
    expect(programs.reduce((sum, program) => sum + program.blocks.length, 0)).toBeGreaterThan(30);
  });

  it('the packages they import compile', () => {
    expect(errors.get('(packages)')).toEqual([]);
  });

  for (const program of programs) {
    it(`${program.doc}: ${program.blocks.length} block(s) type-check`, () => {
      expect(errors.get(program.doc)).toEqual([]);
    });
  }
});

describe('runnable docs run against the reference server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    process.env.TRITON_URL = server.url;
  });
  afterAll(async () => {
    delete process.env.TRITON_URL;
    await server.stop();
  });

  for (const [doc, expected] of Object.entries(RUNNABLE)) {
    it(`${doc} runs`, async () => {
      const program = programs.find((candidate) => candidate.doc === doc);
      expect(program, `${doc} has no ts blocks`).toBeDefined();
      const file = join(outDir, `${doc.replace(/[/.]/g, '_')}.run.ts`);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, program?.code ?? '');
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      try {
        await import(/* @vite-ignore */ `${file}?t=${Date.now()}`);
        // What the console would show: one line per call, formatted as console.log formats it.
        const printed = log.mock.calls.map((args) => format(...args)).join('\n');
        for (const text of expected) expect(printed).toMatch(text);
      } finally {
        log.mockRestore();
      }
    }, 60_000);
  }
});

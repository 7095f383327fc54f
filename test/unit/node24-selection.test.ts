// npm test runs the unit files twice, on Node 20 (`unit`) and on Node 24 (`unit-node24`), the
// second time without the files listed in vitest.config.ts's `notOnNode24`. A mistyped or stale
// entry (a file renamed or removed) would exclude nothing and say nothing: this file fails on it.
// Core's files are never listed.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import config, { notOnNode24 } from '../../vitest.config.js';

const root = join(import.meta.dirname, '..', '..');

interface ProjectTest {
  name?: string;
  include?: string[];
  exclude?: string[];
}

function project(name: string): ProjectTest {
  const projects = (config.test?.projects ?? []) as { test?: ProjectTest }[];
  const found = projects.find((entry) => entry.test?.name === name)?.test;
  if (found === undefined) throw new Error(`vitest.config.ts has no project ${name}`);
  return found;
}

describe('the Node 24 unit run', () => {
  it('lists only existing unit test files, each once, none of core', () => {
    const problems = notOnNode24.flatMap((file) => [
      ...(existsSync(join(root, file)) ? [] : [`${file}: no such file`]),
      ...(file.endsWith('.test.ts') ? [] : [`${file}: not a test file`]),
      ...(file.startsWith('packages/core/') ? [`${file}: core runs on both Node versions`] : []),
      ...(notOnNode24.indexOf(file) === notOnNode24.lastIndexOf(file) ? [] : [`${file}: listed twice`]),
    ]);
    expect(problems).toEqual([]);
  });

  it('runs the unit files but the listed ones', () => {
    const unit = project('unit');
    const node24 = project('unit-node24');
    expect(node24.include).toEqual(unit.include);
    expect(unit.exclude ?? []).not.toEqual(expect.arrayContaining(notOnNode24));
    expect(node24.exclude).toEqual(expect.arrayContaining(notOnNode24));
    // The runtime matrix (Bun, Deno, workerd) runs once, in the Node 20 run.
    expect(notOnNode24).toContain('test/runtimes/runtime-matrix.test.ts');
  });
});

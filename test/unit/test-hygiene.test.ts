// Guards the timing rules of docs/testing.md over every test file: an `expect(...).rejects` or
// `.resolves` that is not awaited (or returned) asserts nothing the test waits for, and a test that
// reads the wall clock into an assertion fails on a busy machine.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

function testFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.test.ts')) found.push(path);
    }
  };
  for (const dir of ['packages', 'test', 'examples']) walk(join(root, dir));
  return found;
}

/** `where: what` for each finding in one file. */
function findings(path: string): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const where = (node: ts.Node) =>
    `${relative(root, path)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAccessExpression(node) && ['rejects', 'resolves'].includes(node.name.text)) {
      // Climb the matcher chain (`.rejects.toThrow(...)`) to the statement that holds it.
      let top: ts.Node = node;
      while (ts.isPropertyAccessExpression(top.parent) || ts.isCallExpression(top.parent)) top = top.parent;
      if (ts.isExpressionStatement(top.parent)) out.push(`${where(node)}: .${node.name.text} not awaited`);
    }
    // expect(Date.now() - started) / expect(performance.now() - t) / expect(elapsed): a timed assertion.
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'expect') {
      const argument = node.arguments[0]?.getText(source) ?? '';
      if (/Date\.now\(\)|performance\.now\(\)|\belapsed\b/.test(argument))
        out.push(`${where(node)}: asserts on elapsed time`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe('test hygiene', () => {
  it('finds the test files', () => {
    expect(testFiles().length).toBeGreaterThan(50);
  });

  it('awaits every rejects/resolves and asserts on no elapsed time', () => {
    expect(testFiles().flatMap(findings)).toEqual([]);
  });
});

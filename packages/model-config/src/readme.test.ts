import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

// Every TypeScript block of this package's README runs (they need no server).
const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
const snippets = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] as string);
const dir = join(import.meta.dirname, '..', '.readme-snippets');
mkdirSync(dir, { recursive: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('README snippets', () => {
  it('has snippets', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(4);
  });

  it.each(snippets.map((code, index) => [index + 1, code] as const))(
    'snippet %i runs and prints',
    async (index, code) => {
      const file = join(dir, `snippet-${index}.ts`);
      writeFileSync(file, code);
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      try {
        await import(/* @vite-ignore */ file);
        expect(log).toHaveBeenCalled();
        if (code.includes('unbounded-queue'))
          expect(String(log.mock.calls[0]?.[0])).toContain('error unbounded-queue');
        if (code.includes('checkMultiTenantPreset(preset)')) expect(log.mock.calls[1]?.[0]).toEqual([]);
      } finally {
        log.mockRestore();
      }
    },
  );
});

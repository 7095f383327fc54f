import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Every TypeScript block of the README is compiled and run against the reference server.
const root = join(import.meta.dirname, '..', '..');
const snippets = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map(
  (match) => match[1] as string,
);
const dir = join(root, 'test', 'unit', '.snippets');

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  process.env.TRITON_URL = server.url;
  mkdirSync(dir, { recursive: true });
});
afterAll(async () => {
  delete process.env.TRITON_URL;
  await server.stop();
});

describe('README snippets', () => {
  it('has at least one TypeScript snippet', () => {
    expect(snippets.length).toBeGreaterThan(0);
  });

  snippets.forEach((code, index) => {
    it(`snippet ${index + 1} runs`, async () => {
      const file = join(dir, `readme-${index + 1}.ts`);
      writeFileSync(file, code);
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      try {
        await import(/* @vite-ignore */ `${file}?t=${Date.now()}`);
        expect(log).toHaveBeenCalled();
        if (index === 0) expect(String(log.mock.calls[0]?.[0])).toContain('2,2');
      } finally {
        log.mockRestore();
      }
    });
  });
});

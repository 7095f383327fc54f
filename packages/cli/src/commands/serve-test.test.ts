import { createTritonClient } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../cli-io.js';
import { run } from './serve-test.js';

describe('serve-test --transport', () => {
  it('serves the reference server on the grpc-js transport when asked, and refuses other names', async () => {
    const controller = new AbortController();
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = {
      stdout: (text) => out.push(text),
      stderr: (text) => err.push(text),
      signal: controller.signal,
    };
    const serving = run(['--port', '0', '--no-llm', '--json', '--transport', 'grpc-js'], io);
    await expect.poll(() => out.length).toBe(1);
    const { triton } = JSON.parse(out[0] as string) as { triton: string };
    const client = createTritonClient({ url: triton });
    try {
      expect(await client.serverLive()).toBe(true);
    } finally {
      await client.close();
      controller.abort();
    }
    expect(await serving).toBe(0);

    const refused = await run(['--transport', 'grpc'], { ...io, stdout: () => {} });
    expect(refused).toBe(2);
    expect(err.join('')).toContain("--transport must be lean, http2 or grpc-js, got 'grpc'");
  });
});

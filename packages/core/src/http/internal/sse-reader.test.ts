import { describe, expect, it } from 'vitest';
import { ErrorCode, InfergateError } from '../../errors.js';
import { sseData } from './sse-reader.js';

const pass = <T>(work: Promise<T>) => work;

function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function all(stream: ReadableStream<Uint8Array>, max = 1024): Promise<string[]> {
  const out: string[] = [];
  for await (const data of sseData(stream, max, pass)) out.push(data);
  return out;
}

describe('sseData', () => {
  it('splits events across chunk boundaries, CRLF and multi-line data, skipping comments', async () => {
    expect(
      await all(body(['data: {"a":', '1}\n\n: keep-alive\n\ndata: x\r\ndata: y\r\n\r\n', 'data:z'])),
    ).toEqual(['{"a":1}', 'x\ny', 'z']);
  });

  it('decodes UTF-8 split inside a character', async () => {
    const bytes = new TextEncoder().encode('data: é✓\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, 7));
        controller.enqueue(bytes.subarray(7));
        controller.close();
      },
    });
    expect(await all(stream)).toEqual(['é✓']);
  });

  it('refuses an event past maxEventBytes instead of buffering it', async () => {
    const error = await all(body([`data: ${'x'.repeat(100)}`]), 50).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe(ErrorCode.ResourceExhausted);
  });

  it('cancels the body when the reader leaves early', async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode('data: 1\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const data of sseData(stream, 1024, pass)) {
      expect(data).toBe('1');
      break;
    }
    expect(cancelled).toBe(true);
  });
});

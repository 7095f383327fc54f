import { describe, expect, it } from 'vitest';
import { ErrorCode } from './errors.js';
import { parseServerSentEvents, type ServerSentEvent } from './server-sent-events.js';

function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function events(chunks: string[]): Promise<ServerSentEvent[]> {
  const out: ServerSentEvent[] = [];
  for await (const event of parseServerSentEvents(body(chunks))) out.push(event);
  return out;
}

describe('parseServerSentEvents', () => {
  it('parses named events, comments and multi-line data across chunk borders', async () => {
    expect(
      await events([': keep-alive\n\nevent: ping\nda', 'ta: {"a":1}\n\ndata: x\ndata: y\r', '\n\r\n']),
    ).toEqual([
      { event: 'ping', data: '{"a":1}' },
      { event: 'message', data: 'x\ny' },
    ]);
  });

  it('keeps multi-byte characters split between chunks', async () => {
    const bytes = new TextEncoder().encode('data: héllo\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 8));
        controller.enqueue(bytes.slice(8));
        controller.close();
      },
    });
    const out: ServerSentEvent[] = [];
    for await (const event of parseServerSentEvents(stream)) out.push(event);
    expect(out).toEqual([{ event: 'message', data: 'héllo' }]);
  });

  it('dispatches a last event that lacks its blank line', async () => {
    expect(await events(['data: [DONE]'])).toEqual([{ event: 'message', data: '[DONE]' }]);
  });

  it('cancels the body when the consumer stops early', async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode('data: 1\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const _event of parseServerSentEvents(stream)) break;
    expect(cancelled).toBe(true);
  });

  it('fails an event that never ends once it passes the bound (RESOURCE_EXHAUSTED), and cancels the body', async () => {
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('data: '));
      },
      pull(controller) {
        // Never a line end: without a bound the buffer would grow for as long as the server sends.
        controller.enqueue(new TextEncoder().encode('x'.repeat(1024)));
      },
      cancel() {
        cancelled = true;
      },
    });
    const reading = (async () => {
      for await (const _event of parseServerSentEvents(endless, { maxEventChars: 64 * 1024 })) {
        /* never reached */
      }
    })();
    await expect(reading).rejects.toMatchObject({ code: ErrorCode.ResourceExhausted, retryable: false });
    expect(cancelled).toBe(true);
  });

  it('bounds many data lines of one event as well as one long line', async () => {
    const lines = Array.from({ length: 100 }, () => `data: ${'y'.repeat(100)}\n`);
    await expect(
      (async () => {
        for await (const _event of parseServerSentEvents(body(lines), { maxEventChars: 5_000 })) {
          /* never reached */
        }
      })(),
    ).rejects.toMatchObject({ code: ErrorCode.ResourceExhausted });
    // Under the bound the same lines are one event.
    expect(
      (
        await (async () => {
          const out: ServerSentEvent[] = [];
          for await (const event of parseServerSentEvents(body([...lines, '\n']), { maxEventChars: 100_000 }))
            out.push(event);
          return out;
        })()
      ).length,
    ).toBe(1);
  });

  it('reads a last data line without a space or blank line, and ends a hanging read through race', async () => {
    expect(await events(['data: {"a":', '1}\n\n', 'data:z'])).toEqual([
      { event: 'message', data: '{"a":1}' },
      { event: 'message', data: 'z' },
    ]);
    let cancelled = false;
    const hanging = new ReadableStream<Uint8Array>({
      cancel() {
        cancelled = true;
      },
    });
    const controller = new AbortController();
    const race = <T>(work: Promise<T>) =>
      Promise.race([
        work,
        new Promise<never>((_resolve, reject) => {
          controller.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
        }),
      ]);
    const reading = (async () => {
      for await (const _event of parseServerSentEvents(hanging, { race })) {
        /* never reached */
      }
    })();
    controller.abort();
    await expect(reading).rejects.toThrow('stopped');
    expect(cancelled).toBe(true);
  });
});

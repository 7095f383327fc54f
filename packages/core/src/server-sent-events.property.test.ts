import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseServerSentEvents, type ServerSentEvent } from './server-sent-events.js';

/** Field values hold no line breaks (the format cannot carry them); anything else goes, emoji too. */
const valueArbitrary = fc
  .string({ unit: 'grapheme', maxLength: 12 })
  .map((text) => text.replace(/[\r\n]/g, ''));
const eventArbitrary = fc.record({
  event: fc.option(
    valueArbitrary.filter((name) => name !== '' && !name.startsWith(' ')),
    { nil: undefined },
  ),
  lines: fc.array(valueArbitrary, { minLength: 1, maxLength: 3 }),
  comment: fc.boolean(),
});
const newline = fc.constantFrom('\n', '\r\n', '\r');

/** Serializes events with the given line ends; returns the bytes and the events a parser must see. */
function serialize(
  events: readonly { event: string | undefined; lines: readonly string[]; comment: boolean }[],
  ends: readonly string[],
): { bytes: Uint8Array; expected: ServerSentEvent[] } {
  let text = '';
  let endIndex = 0;
  let previous = '';
  // A CR line end followed by an LF line end reads as one CRLF: a writer cannot mean two there.
  const end = () => {
    const next = ends[endIndex++ % ends.length] as string;
    previous = previous === '\r' && next === '\n' ? '\r' : next;
    return previous;
  };
  for (const { event, lines, comment } of events) {
    if (comment) text += `: keep-alive${end()}`;
    if (event !== undefined) text += `event: ${event}${end()}`;
    for (const line of lines) text += `data: ${line}${end()}`;
    text += end();
  }
  const expected = events.map(({ event, lines }) => ({ event: event ?? 'message', data: lines.join('\n') }));
  return { bytes: new TextEncoder().encode(text), expected };
}

/** A body that delivers `bytes` in chunks cut at the given points (which may split a UTF-8 character). */
function chunked(bytes: Uint8Array, cuts: readonly number[]): ReadableStream<Uint8Array> {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.byteLength + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const point of [...points, bytes.byteLength]) {
    if (point > start) chunks.push(bytes.slice(start, point));
    start = Math.max(start, point);
  }
  return new ReadableStream({
    pull(controller) {
      const next = chunks.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
}

describe('SSE parser (property)', () => {
  it('reads the same events whatever the chunk boundaries and line ends', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArbitrary, { maxLength: 5 }),
        fc.array(newline, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (events, ends, cuts) => {
          const { bytes, expected } = serialize(events, ends);
          const seen: ServerSentEvent[] = [];
          for await (const event of parseServerSentEvents(chunked(bytes, cuts))) seen.push(event);
          expect(seen).toEqual(expected);
        },
      ),
      { numRuns: 400 },
    );
  });
});

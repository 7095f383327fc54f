import { ErrorCode, InfergateError } from '../../errors.js';

/**
 * Splits a text/event-stream body into the `data` of each event (lines joined with "\n"). One event
 * may hold at most `maxEventBytes` characters: a server that never ends its event cannot grow the
 * buffer without bound.
 */
export async function* sseData(
  body: ReadableStream<Uint8Array>,
  maxEventBytes: number,
  race: <T>(work: Promise<T>) => Promise<T>,
): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await race(reader.read());
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (;;) {
        const match = /\r\n\r\n|\n\n|\r\r/.exec(buffer);
        if (match === null) break;
        const event = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        const data = dataOf(event);
        if (data !== undefined) yield data;
      }
      if (buffer.length > maxEventBytes) {
        throw new InfergateError(
          ErrorCode.ResourceExhausted,
          `a server-sent event grew past maxEventBytes (${maxEventBytes})`,
          { retryable: false },
        );
      }
      if (done) break;
    }
    const rest = dataOf(buffer);
    if (rest !== undefined) yield rest;
    finished = true;
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    try {
      reader.releaseLock();
    } catch {
      // a read still pending after an abort: the stream is errored anyway
    }
  }
}

function dataOf(event: string): string | undefined {
  const lines: string[] = [];
  for (const line of event.split(/\r\n|\n|\r/)) {
    if (line.startsWith('data:')) lines.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
  return lines.length > 0 ? lines.join('\n') : undefined;
}

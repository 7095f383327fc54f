import { ErrorCode, InfergateError } from '@infergate/core';

/** One server-sent event: its `event:` name ("message" when absent) and its joined `data:` lines. */
export interface SseEvent {
  event: string;
  data: string;
}

/** The largest event a stream may send, as core's HTTP client bounds Triton's (16 MiB). */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * Parses a text/event-stream body (WHATWG rules: LF, CR or CRLF line ends, `:` comments, several
 * `data:` lines joined by "\n", a blank line dispatches). Cancels the body when the consumer stops.
 */
export async function* parseSse(
  body: ReadableStream<Uint8Array>,
  maxEventChars = MAX_EVENT_CHARS,
): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let finished = false;
  try {
    while (true) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let start = 0;
      for (let index = 0; index < buffer.length; index++) {
        const char = buffer[index];
        if (char !== '\n' && char !== '\r') continue;
        // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
        if (char === '\r' && index === buffer.length - 1 && !done) break;
        const line = buffer.slice(start, index);
        if (char === '\r' && buffer[index + 1] === '\n') index++;
        start = index + 1;
        if (line === '') {
          if (data.length > 0) yield { event: event === '' ? 'message' : event, data: data.join('\n') };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let fieldValue = colon === -1 ? '' : line.slice(colon + 1);
        if (fieldValue.startsWith(' ')) fieldValue = fieldValue.slice(1);
        if (field === 'event') event = fieldValue;
        else if (field === 'data') data.push(fieldValue);
      }
      buffer = buffer.slice(start);
      // An event that never ends (no blank line, or no line end at all) cannot grow without bound.
      if (buffer.length + data.reduce((sum, line) => sum + line.length, 0) > maxEventChars) {
        throw new InfergateError(
          ErrorCode.ResourceExhausted,
          `a server-sent event grew past ${maxEventChars} characters`,
          { retryable: false },
        );
      }
      if (done) {
        // A last event without its blank line still counts (some servers end that way).
        if (buffer !== '' && buffer.startsWith('data:')) data.push(buffer.slice(5).trimStart());
        if (data.length > 0) yield { event: event === '' ? 'message' : event, data: data.join('\n') };
        finished = true;
        return;
      }
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

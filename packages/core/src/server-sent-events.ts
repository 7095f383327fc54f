import { ErrorCode, InfergateError } from './errors.js';

/** One server-sent event: its `event:` name ("message" when absent) and its joined `data:` lines. */
export interface ServerSentEvent {
  event: string;
  data: string;
}

export interface ServerSentEventsOptions {
  /**
   * The most characters one event may hold (its buffered line plus its `data:` lines): a server that
   * never ends an event cannot grow the buffer without bound. @default 16 MiB
   */
  maxEventChars?: number;
  /** Wraps each read (e.g. a call scope's `race`, so an abort or deadline ends a read that hangs). */
  race?: <T>(work: Promise<T>) => Promise<T>;
}

const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * Parses a `text/event-stream` body by the WHATWG rules: LF, CR or CRLF line ends, `:` comments,
 * several `data:` lines joined by "\n", a blank line dispatches, an event without data is dropped.
 * A last event the server ended without its blank line still counts. The body is cancelled when
 * the consumer stops early; an event past `maxEventChars` fails with RESOURCE_EXHAUSTED.
 */
export async function* parseServerSentEvents(
  body: ReadableStream<Uint8Array>,
  options: ServerSentEventsOptions = {},
): AsyncGenerator<ServerSentEvent, void, undefined> {
  const maxEventChars = options.maxEventChars ?? MAX_EVENT_CHARS;
  const race = options.race;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let dataChars = 0;
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await (race === undefined ? reader.read() : race(reader.read()));
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let start = 0;
      for (let index = 0; index < buffer.length; index++) {
        const char = buffer.charCodeAt(index);
        if (char !== 10 && char !== 13) continue;
        // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
        if (char === 13 && index === buffer.length - 1 && !done) break;
        const line = buffer.slice(start, index);
        if (char === 13 && buffer.charCodeAt(index + 1) === 10) index++;
        start = index + 1;
        if (line === '') {
          if (data.length > 0) yield { event: event === '' ? 'message' : event, data: data.join('\n') };
          event = '';
          data = [];
          dataChars = 0;
          continue;
        }
        if (line.charCodeAt(0) === 58) continue; // ':' starts a comment
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.charCodeAt(0) === 32) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') {
          data.push(value);
          dataChars += value.length;
        }
      }
      buffer = buffer.slice(start);
      if (buffer.length + dataChars > maxEventChars) {
        throw new InfergateError(
          ErrorCode.ResourceExhausted,
          `a server-sent event grew past ${maxEventChars} characters`,
          { retryable: false },
        );
      }
      if (done) break;
    }
    // A last event without its blank line still counts (some servers end that way).
    if (buffer.startsWith('data:')) data.push(buffer.slice(buffer.startsWith('data: ') ? 6 : 5));
    if (data.length > 0) yield { event: event === '' ? 'message' : event, data: data.join('\n') };
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

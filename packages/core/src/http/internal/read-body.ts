import type { CallScope } from '../../call-scope.js';
import { ErrorCode, InfergateError } from '../../errors.js';

function tooLarge(size: number, limit: number): InfergateError {
  return new InfergateError(
    ErrorCode.ResourceExhausted,
    `the response is ${size} bytes, over maxResponseBytes (${limit})`,
    { retryable: false },
  );
}

/**
 * Reads a response body, refusing more than `limit` bytes: before reading when Content-Length says
 * so, while reading otherwise (the rest is cancelled). Ends early with the scope's typed reason.
 */
export async function readBody(response: Response, limit: number, scope: CallScope): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge(declared, limit);
  }
  if (response.body === null) return new Uint8Array(0);
  if (Number.isFinite(declared) && response.headers.has('content-length')) {
    return new Uint8Array(await scope.race(response.arrayBuffer()));
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await scope.race(reader.read());
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge(total, limit);
      }
      chunks.push(value);
    }
  } finally {
    try {
      reader.releaseLock();
    } catch {
      // a read still pending after an abort: the stream is errored anyway
    }
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

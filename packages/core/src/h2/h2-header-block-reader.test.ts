import { describe, expect, it } from 'vitest';
import { FLAG_END_HEADERS } from './h2-frame-types.js';
import { HeaderBlockReader } from './h2-header-block-reader.js';

/** An HPACK literal field without indexing, name and value as plain octets (RFC 7541, 6.2.2). */
function literal(name: string, value: string): Buffer {
  return Buffer.concat([
    Buffer.from([0x00, name.length]),
    Buffer.from(name, 'latin1'),
    Buffer.from([value.length]),
    Buffer.from(value, 'latin1'),
  ]);
}

describe('HeaderBlockReader', () => {
  it('keeps a copy of a fragment that waits for CONTINUATION: the read buffer is reused', () => {
    const block = Buffer.concat([literal('grpc-status', '0'), literal('grpc-message', 'fine')]);
    const reader = new HeaderBlockReader();
    // The HEADERS frame and its CONTINUATION come in two reads of one reused buffer.
    const read = Buffer.from(block.subarray(0, 10));
    expect(reader.headers(read, 0, 1)).toBeUndefined();
    read.fill(0);
    const fields = reader.continuation(Buffer.from(block.subarray(10)), FLAG_END_HEADERS);
    expect(reader.errorCode).toBe(0);
    expect(fields).toEqual(['grpc-status', '0', 'grpc-message', 'fine']);
  });
});

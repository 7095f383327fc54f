import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { FramingError, GrpcMessageReader, type RawMessage } from './grpc-message-reader.js';
import { ModelInferRequestSchema } from './proto.js';

const frame = (text: string, flag = 0) => {
  const body = Buffer.from(text);
  const out = Buffer.alloc(5 + body.byteLength);
  out[0] = flag;
  out.writeUInt32BE(body.byteLength, 1);
  body.copy(out, 5);
  return out;
};

function readAll(chunks: readonly Buffer[], maxBytes = 1024): RawMessage[] {
  const messages: RawMessage[] = [];
  const reader = new GrpcMessageReader(maxBytes, (message) => messages.push(message));
  for (const chunk of chunks) reader.push(chunk);
  expect(reader.partial).toBe(false);
  return messages;
}

describe('GrpcMessageReader', () => {
  const body = Buffer.concat([frame('first'), frame('', 0), frame('third', 1)]);
  const expected = [
    { compressed: false, text: 'first' },
    { compressed: false, text: '' },
    { compressed: true, text: 'third' },
  ];
  const texts = (messages: RawMessage[]) =>
    messages.map((message) => ({ compressed: message.compressed, text: message.bytes.toString() }));

  it('reads several messages from one chunk', () => {
    expect(texts(readAll([body]))).toEqual(expected);
  });

  it('reads messages cut at every byte, prefixes included', () => {
    const bytes = [...body].map((byte) => Buffer.from([byte]));
    expect(texts(readAll(bytes))).toEqual(expected);
  });

  it('reports a message still partial at the end', () => {
    const reader = new GrpcMessageReader(1024, () => {});
    reader.push(frame('cut short').subarray(0, 8));
    expect(reader.partial).toBe(true);
  });

  it('refuses a prefix over the limit with RESOURCE_EXHAUSTED, and an unknown flag with INTERNAL', () => {
    const big = new GrpcMessageReader(4, () => {});
    expect(() => big.push(frame('too long'))).toThrow(FramingError);
    expect(() => new GrpcMessageReader(4, () => {}).push(frame('12345'))).toThrow(
      /larger than max \(5 vs\. 4\)/,
    );
    let code = 0;
    try {
      new GrpcMessageReader(4, () => {}).push(frame('x', 7));
    } catch (error) {
      code = (error as FramingError).code;
    }
    expect(code).toBe(13);
  });

  it("keeps no view of the chunks it read, and aligns a request's first raw input to 8 bytes", () => {
    const raw = new Uint8Array(4096).map((_, i) => i & 0xff);
    const request = toBinary(
      ModelInferRequestSchema,
      create(ModelInferRequestSchema, {
        modelName: 'identity',
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 1024n] }],
        rawInputContents: [raw],
      }),
    );
    const body = Buffer.alloc(5 + request.byteLength);
    body.writeUInt32BE(request.byteLength, 1);
    body.set(request, 5);
    for (const cutAt of [1, 7, 100, 1000, body.byteLength]) {
      const messages: RawMessage[] = [];
      const reader = new GrpcMessageReader(1 << 20, (message) => messages.push(message));
      for (let offset = 0; offset < body.byteLength; offset += cutAt) {
        // Each chunk is overwritten once read, as node:http2's read buffers may be reused.
        const chunk = Buffer.from(body.subarray(offset, offset + cutAt));
        reader.push(chunk);
        chunk.fill(0);
      }
      const decoded = fromBinary(ModelInferRequestSchema, messages[0]?.bytes ?? new Uint8Array());
      const first = decoded.rawInputContents[0] ?? new Uint8Array();
      expect(Buffer.from(first).equals(Buffer.from(raw))).toBe(true);
      // Aligned whenever the first chunk reaches the raw input's start (the request's head is ~50 bytes).
      if (cutAt >= 100) expect(first.byteOffset % 8).toBe(0);
    }
  });
});

import { create, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ModelInferResponseSchema } from '../gen/grpc_service_pb.js';
import { fromModelInferResponse, parseModelInferResponse } from '../internal/infer-wire.js';
import {
  assembleMessage,
  FrameError,
  firstRawOutputOffset,
  MessageReader,
  writeFrameHeader,
} from './grpc-frames.js';

function framed(messages: readonly Uint8Array[]): Buffer {
  const out = Buffer.alloc(messages.reduce((sum, message) => sum + 5 + message.byteLength, 0));
  let offset = 0;
  for (const message of messages) {
    writeFrameHeader(out, offset, message.byteLength);
    out.set(message, offset + 5);
    offset += 5 + message.byteLength;
  }
  return out;
}

/** Cuts `bytes` at the given points (each taken modulo the length). */
function cut(bytes: Buffer, points: readonly number[]): Buffer[] {
  const at = [...new Set(points.map((point) => point % (bytes.byteLength + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of [...at, bytes.byteLength]) {
    if (point > start) chunks.push(bytes.subarray(start, point));
    start = Math.max(start, point);
  }
  return chunks;
}

describe('MessageReader', () => {
  it('gives back every message, however the stream is cut into chunks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (messages, points) => {
          const received: Buffer[] = [];
          const reader = new MessageReader(1024, (message) => received.push(Buffer.from(message)));
          for (const chunk of cut(framed(messages), points)) reader.push(chunk);
          expect(received).toEqual(messages.map((message) => Buffer.from(message)));
          expect(reader.partial).toBe(false);
        },
      ),
    );
  });

  it('keeps no view of a chunk: the connection reuses its read buffer for the next read', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 64 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (messages, points) => {
          const received: Buffer[] = [];
          const reader = new MessageReader(1024, (message) => received.push(message));
          for (const chunk of cut(framed(messages), points)) {
            // One reused buffer, as the socket's reads: each chunk is overwritten once handed over.
            const reused = Buffer.from(chunk);
            reader.push(reused);
            reused.fill(0xee);
          }
          expect(received).toEqual(messages.map((message) => Buffer.from(message)));
        },
      ),
    );
  });

  it('says when the stream stopped inside a message', () => {
    const reader = new MessageReader(1024, () => {});
    reader.push(framed([new Uint8Array(10)]).subarray(0, 8));
    expect(reader.partial).toBe(true);
  });

  it('refuses a compressed message (INTERNAL) and one over the limit (RESOURCE_EXHAUSTED, grpc-js wording)', () => {
    const compressed = framed([new Uint8Array(3)]);
    compressed[0] = 1;
    expect(() => new MessageReader(1024, () => {}).push(compressed)).toThrow(FrameError);
    try {
      new MessageReader(1024, () => {}).push(compressed);
    } catch (error) {
      expect((error as FrameError).status).toBe(13);
    }
    try {
      new MessageReader(8, () => {}).push(framed([new Uint8Array(9)]));
      expect.unreachable();
    } catch (error) {
      expect((error as FrameError).status).toBe(8);
      expect((error as Error).message).toMatch(/Received message larger than max \(9 vs\. 8\)/);
    }
  });
});

describe('MessageReader for a server (compressed messages taken)', () => {
  it('hands on the compressed flag, and refuses a flag other than 0 or 1 (INTERNAL)', () => {
    const received: [string, boolean][] = [];
    const reader = new MessageReader(
      1024,
      (message, compressed) => received.push([message.toString(), compressed]),
      {
        compressed: true,
      },
    );
    const zipped = framed([Buffer.from('zipped')]);
    zipped[0] = 1;
    reader.push(Buffer.concat([framed([Buffer.from('plain')]), zipped]));
    expect(received).toEqual([
      ['plain', false],
      ['zipped', true],
    ]);
    const odd = framed([Buffer.from('x')]);
    odd[0] = 7;
    expect(() => reader.push(odd)).toThrow(/invalid gRPC message flag 7/);
  });

  it('takes each message’s memory from `allocate`, its raw input still 8-byte aligned', () => {
    const backings: Buffer[] = [];
    // Memory at an odd offset of a larger block, as recycled memory may be: the reader must align.
    const allocate = (bytes: number) => {
      const backing = Buffer.alloc(bytes + 3).subarray(3);
      backings.push(backing);
      return backing;
    };
    const raw = new Uint8Array(4096).map((_, i) => i & 0xff);
    const request = Buffer.concat([Buffer.from([0x0a, 0x01, 0x6d]), Buffer.from([0x3a, 0x80, 0x20]), raw]);
    const received: Buffer[] = [];
    const reader = new MessageReader(1 << 20, (message) => received.push(message), {
      compressed: true,
      alignField: 7,
      allocate,
    });
    const bytes = framed([request, request]);
    for (let at = 0; at < bytes.byteLength; at += 1000) reader.push(bytes.subarray(at, at + 1000));
    expect(backings).toHaveLength(2);
    expect(received.map((message) => message.buffer)).toEqual(backings.map((backing) => backing.buffer));
    for (const message of received) {
      expect(message.equals(request)).toBe(true);
      expect((message.byteOffset + 6) % 8).toBe(0);
    }
  });
});

describe('assembleMessage', () => {
  it('places a response so that its first raw output is 8-byte aligned, bytes unchanged', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }),
        fc.integer({ min: 1, max: 3000 }),
        fc.integer({ min: 1, max: 4096 }),
        (name, elements, frameSize) => {
          const raw = new Uint8Array(elements * 4).map((_, i) => i & 0xff);
          const message = toBinary(
            ModelInferResponseSchema,
            create(ModelInferResponseSchema, {
              modelName: name,
              outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [BigInt(elements)] }],
              rawOutputContents: [raw],
            }),
          );
          const parts = cut(
            Buffer.from(message),
            Array.from({ length: Math.ceil(message.byteLength / frameSize) }, (_, i) => (i + 1) * frameSize),
          );
          const assembled = assembleMessage(parts, message.byteLength);
          expect(Buffer.from(assembled).equals(Buffer.from(message))).toBe(true);
          const output = fromModelInferResponse(parseModelInferResponse(assembled)).outputs[0];
          expect(Buffer.from(output?.raw ?? []).equals(Buffer.from(raw))).toBe(true);
          // Aligned whenever the first frame reaches the raw bytes' start.
          if (firstRawOutputOffset(parts[0] as Buffer, (parts[0] as Buffer).byteLength) >= 0)
            expect((output?.raw.byteOffset ?? 1) % 8).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  });
});

import { describe, expect, it } from 'vitest';
import { writeOutputsInto } from '../internal/infer-response-into.js';
import type { InferRequest, InferResponse } from '../transport.js';
import { DEFAULT_MESSAGE_POOL_BOUNDS, MessagePool } from './message-pool.js';

const MiB = 1024 * 1024;

describe('MessagePool', () => {
  it('hands released memory to the next message that fits, the smallest first', () => {
    const pool = new MessagePool();
    const small = pool.allocate(64 * 1024);
    const large = pool.allocate(MiB);
    pool.release(large);
    pool.release(small);
    expect(pool.stats).toMatchObject({ fresh: 2, reused: 0, idle: 2 });
    expect(pool.allocate(60 * 1024).buffer).toBe(small.buffer);
    expect(pool.allocate(MiB - 10).buffer).toBe(large.buffer);
    expect(pool.stats).toMatchObject({ fresh: 2, reused: 2, idle: 0, idleBytes: 0 });
  });

  it('gives a message bigger than every idle buffer fresh memory', () => {
    const pool = new MessagePool();
    pool.release(pool.allocate(8192));
    const bigger = pool.allocate(MiB);
    expect(bigger.byteLength).toBe(MiB);
    expect(pool.stats).toMatchObject({ fresh: 2, reused: 0, idle: 1 });
  });

  it('keeps at most maxIdle buffers and maxIdleBytes bytes idle', () => {
    const byCount = new MessagePool({ maxIdle: 2, maxIdleBytes: 100 * MiB });
    const three = [byCount.allocate(MiB), byCount.allocate(MiB), byCount.allocate(MiB)];
    for (const message of three) byCount.release(message);
    expect(byCount.stats.idle).toBe(2);
    const byBytes = new MessagePool({ maxIdle: 64, maxIdleBytes: 2 * MiB });
    const held = [byBytes.allocate(MiB), byBytes.allocate(MiB), byBytes.allocate(MiB)];
    for (const message of held) byBytes.release(message);
    expect(byBytes.stats).toMatchObject({ idle: 2, idleBytes: 2 * MiB });
    expect(DEFAULT_MESSAGE_POOL_BOUNDS).toEqual({ maxIdle: 64, maxIdleBytes: 96 * MiB });
  });

  it('fits the default bound with 64 answers of 1 MiB in flight', () => {
    const pool = new MessagePool();
    // A 1 MiB tensor's answer: the tensor, its metadata, and the 8 bytes of alignment slack.
    const messages = Array.from({ length: 64 }, () => pool.allocate(MiB + 200));
    for (const message of messages) pool.release(message);
    expect(pool.stats.idle).toBe(64);
  });

  it('takes back only its own memory, once, and nothing after clear', () => {
    const pool = new MessagePool();
    pool.release(Buffer.allocUnsafe(MiB));
    expect(pool.stats.idle).toBe(0);
    const message = pool.allocate(MiB);
    pool.release(message);
    pool.release(message);
    expect(pool.stats.idle).toBe(1);
    pool.clear();
    expect(pool.stats).toMatchObject({ idle: 0, idleBytes: 0 });
    const after = pool.allocate(MiB);
    pool.release(after);
    expect(pool.stats.idle).toBe(0);
  });

  it('leaves small messages to Node', () => {
    const pool = new MessagePool();
    pool.release(pool.allocate(100));
    expect(pool.stats).toMatchObject({ fresh: 0, idle: 0 });
  });
});

describe('writeOutputsInto', () => {
  const raw = new Uint8Array(new Float32Array([1, 2, 3]).buffer);
  const response: InferResponse = {
    model: 'm',
    modelVersion: '1',
    id: '',
    parameters: {},
    outputs: [
      { name: 'A', datatype: 'FP32', shape: [3], raw },
      { name: 'B', datatype: 'FP32', shape: [3], raw },
    ],
  };

  it('copies outputs not bound to `into` out of a message whose memory is reused', () => {
    const into = new Float32Array(3);
    const request: InferRequest = { model: 'm', inputs: [], outputs: [{ name: 'A', into }] };
    const written = writeOutputsInto(request, response, { copyOthers: true });
    expect(written.outputs[0]?.raw.buffer).toBe(into.buffer);
    expect(written.outputs[1]?.raw.buffer).not.toBe(raw.buffer);
    const copied = (written.outputs[1] as { raw: Uint8Array }).raw;
    expect(Array.from(new Float32Array(copied.slice().buffer))).toEqual([1, 2, 3]);
    expect(Array.from(into)).toEqual([1, 2, 3]);
  });

  it('gives an empty output not bound to `into` memory of its own, not a view of the reused message', () => {
    // An empty entry of raw_output_contents is an empty view of the message: its `buffer` would
    // still reach the message's memory, which the next answer is received into.
    const message = new Uint8Array(8192);
    message.set(raw, 100);
    const received: InferResponse = {
      ...response,
      outputs: [
        { name: 'A', datatype: 'FP32', shape: [3], raw: message.subarray(100, 112) },
        { name: 'EMPTY', datatype: 'FP32', shape: [0], raw: message.subarray(112, 112) },
      ],
    };
    const request: InferRequest = {
      model: 'm',
      inputs: [],
      outputs: [{ name: 'A', into: new Float32Array(3) }],
    };
    const written = writeOutputsInto(request, received, { copyOthers: true });
    for (const output of written.outputs) expect(output.raw.buffer).not.toBe(message.buffer);
    expect(written.outputs[1]?.raw.byteLength).toBe(0);
  });

  it('leaves a response alone when nothing is bound', () => {
    expect(writeOutputsInto({ model: 'm', inputs: [] }, response)).toBe(response);
  });
});

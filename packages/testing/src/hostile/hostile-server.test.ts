import { createTritonClient, type ErrorCode, InfergateError, type TritonClient } from '@infergate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostileBehavior } from './hostile-responses.js';
import { type HostileServer, startHostileServer } from './hostile-server.js';

let server: HostileServer;
let client: TritonClient;

beforeAll(async () => {
  server = await startHostileServer();
  // A deadline on every call: a client that waited forever would fail the test, not hang it.
  client = createTritonClient({ url: server.url, timeoutMs: 10_000, enableGpuIpc: false });
});

afterAll(async () => {
  await client.close();
  await server.stop();
});

const input = [{ name: 'INPUT0', datatype: 'FP32' as const, data: [1] }];

async function failure(promise: Promise<unknown>): Promise<InfergateError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(InfergateError);
  return error as InfergateError;
}

async function drain(model: string, timeoutMs?: number): Promise<void> {
  for await (const _ of client.inferStream(model, input, timeoutMs ? { timeoutMs } : {})) {
    // read everything
  }
}

/** Behaviour → the code a client must raise, over unary ModelInfer. */
const unary: ReadonlyArray<readonly [HostileBehavior, ErrorCode, RegExp]> = [
  // grpc-js's wording, or the http2 engine's.
  ['random-bytes', 'DATA_LOSS', /parsing error|is not a ModelInferResponse/],
  ['raw-length-mismatch', 'DATA_LOSS', /7 bytes for shape \[4\]/],
  ['huge-shape', 'DATA_LOSS', /16 bytes for shape \[1000000000000\]/],
  ['huge-bytes-shape', 'DATA_LOSS', /BYTES data does not hold the 1000000000000 elements/],
  ['negative-dim', 'DATA_LOSS', /invalid dimension -4/],
  ['missing-output', 'DATA_LOSS', /left out requested output 'OUTPUT0'/],
  ['extra-outputs', 'DATA_LOSS', /3 raw output buffers for 1 outputs/],
  ['unknown-datatype', 'DATA_LOSS', /unknown datatype 'FP128'/],
  ['bytes-overrun', 'DATA_LOSS', /length prefix runs past the 16 bytes/],
];

describe('a hostile server cannot crash, hang or blow up the client', () => {
  for (const [behavior, code, text] of unary) {
    it(`unary ${behavior}: ${code}`, async () => {
      const error = await failure(client.infer(behavior, input, { outputs: [{ name: 'OUTPUT0' }] }));
      expect(error.code).toBe(code);
      expect(error.rawMessage).toMatch(text);
      expect(error.retryable).toBe(false);
    });
  }

  it('a frame that declares 1 GiB and ends after 16 bytes is DATA_LOSS (nothing allocated by the declared size)', async () => {
    const error = await failure(client.infer('truncated-frame', input));
    expect(error.code).toBe('DATA_LOSS');
    expect(error.rawMessage).toMatch(/No message received|the stream ended inside a message/);
  });

  for (const [behavior, code] of unary.filter(([name]) => name !== 'missing-output')) {
    it(`stream ${behavior}: ${code}`, async () => {
      expect((await failure(drain(behavior))).code).toBe(code);
    });
  }

  it('a stream that ends without the final flag is UNAVAILABLE (cut short), not a silent success', async () => {
    const error = await failure(drain('no-final-flag'));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.rawMessage).toContain('final response');
  });

  it('a stream left open without the final flag ends at the deadline', async () => {
    const error = await failure(drain('stall', 300));
    expect(error.code).toBe('DEADLINE_EXCEEDED');
  });

  it('every behavior was answered by the server (the faults were really sent)', () => {
    for (const [behavior] of unary) expect(server.answered[behavior]).toBeGreaterThanOrEqual(1);
    expect(server.answered['no-final-flag']).toBe(1);
    expect(server.answered.stall).toBe(1);
  });
});

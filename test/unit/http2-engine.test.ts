// `engine: 'http2'` end to end on the reference server: inference, decoupled streams and large
// tensors over the lean node:http2 client; management and stream sessions still over grpc-js.
import { createTritonClient, ErrorCode, InfergateError, type TritonClient } from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: TestServer;
let client: TritonClient;

beforeAll(async () => {
  server = await startTestServer();
  client = createTritonClient({ url: server.url, engine: 'http2', enableGpuIpc: false, timeoutMs: 20_000 });
});

afterAll(async () => {
  await client.close();
  await server.stop();
});

describe("engine: 'http2'", () => {
  it('round-trips a 1 MiB FP32 tensor, and the output decodes as a view of the received bytes', async () => {
    const data = Float32Array.from({ length: 262_144 }, (_, i) => i * 0.25);
    const result = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, 262_144], data },
    ]);
    const output = result.output('OUTPUT0');
    const decoded = output.data as Float32Array;
    expect(decoded).toEqual(data);
    // Reassembled aligned: `data` shares the received memory instead of copying it.
    expect(decoded.buffer).toBe(output.raw.buffer);
    expect(decoded.byteOffset).toBe(output.raw.byteOffset);
  });

  it('carries 64 callers of 1 MiB in a closed loop (more than a session buffers by default) without a refusal', async () => {
    const data = new Float32Array(262_144).fill(1.5);
    const failures: string[] = [];
    let completed = 0;
    const caller = async () => {
      for (let i = 0; i < 3; i++) {
        await client
          .infer('identity', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 262_144], data }])
          .then(
            () => completed++,
            (error: unknown) => failures.push(String(error)),
          );
      }
    };
    await Promise.all(Array.from({ length: 64 }, caller));
    expect(failures.slice(0, 3)).toEqual([]);
    expect(completed).toBe(192);
  });

  it('carries small calls at concurrency, BYTES and INT64 included', async () => {
    const results = await Promise.all(
      Array.from({ length: 32 }, (_, i) =>
        client.infer('identity', [{ name: 'INPUT0', datatype: 'INT64', data: [BigInt(i), -1n] }]),
      ),
    );
    expect(results.map((result) => result.output('OUTPUT0').toArray()[0])).toEqual(
      Array.from({ length: 32 }, (_, i) => BigInt(i)),
    );
    const text = await client.infer('identity', [
      { name: 'INPUT0', datatype: 'BYTES', data: ['a', 'ünï', ''] },
    ]);
    expect(text.output('OUTPUT0').strings()).toEqual(['a', 'ünï', '']);
  });

  it("streams a decoupled model's responses (inferStream) and keeps stream sessions working", async () => {
    const values: number[] = [];
    for await (const result of client.inferStream('repeat', [
      { name: 'IN', datatype: 'INT32', shape: [3], data: [4, 5, 6] },
    ]))
      values.push((result.output('OUT').data as Int32Array)[0] as number);
    expect(values).toEqual([4, 5, 6]);
    const session = client.openStream();
    const seen: number[] = [];
    for await (const result of session.infer('repeat', [
      { name: 'IN', datatype: 'INT32', shape: [2], data: [7, 8] },
    ]))
      seen.push((result.output('OUT').data as Int32Array)[0] as number);
    await session.close();
    expect(seen).toEqual([7, 8]);
  });

  it('maps server errors and management calls as the grpc-js engine does', async () => {
    const error = await client.infer('no_such_model', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }]).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe(ErrorCode.NotFound);
    expect(await client.serverReady()).toBe(true);
  });

  it('refuses an unknown engine with INVALID_ARGUMENT naming the option', () => {
    expect(() => createTritonClient({ url: server.url, engine: 'quic' as 'http2' })).toThrow(/engine/);
  });
});

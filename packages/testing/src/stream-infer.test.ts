import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { createTritonClient, type InfergateError, type TritonClient } from '@infergate/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toWireParameters } from './internal/parameters.js';
import {
  ModelInferRequestSchema,
  type ModelStreamInferResponse,
  ModelStreamInferResponseSchema,
} from './internal/proto.js';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer;
let client: TritonClient;
let raw: grpc.Client;

beforeAll(async () => {
  server = await startTestServer();
  client = createTritonClient({ url: server.url });
  raw = new grpc.Client(server.url, grpc.credentials.createInsecure());
});

beforeEach(() => server.reset());

afterAll(async () => {
  raw.close();
  await client.close();
  await server.stop();
});

type Tensor = { name: string; datatype: string; shape: number[]; raw: Uint8Array };
const int32 = (name: string, values: number[]): Tensor => ({
  name,
  datatype: 'INT32',
  shape: [values.length],
  raw: new Uint8Array(Int32Array.from(values).buffer),
});
const uint32 = (name: string, values: number[]): Tensor => ({
  ...int32(name, values),
  datatype: 'UINT32',
  raw: new Uint8Array(Uint32Array.from(values).buffer),
});

function request(
  model: string,
  id: string,
  tensors: Tensor[],
  parameters: Record<string, never> | object = {},
) {
  return create(ModelInferRequestSchema, {
    modelName: model,
    id,
    inputs: tensors.map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape.map(BigInt) })),
    rawInputContents: tensors.map((t) => t.raw),
    parameters: toWireParameters(parameters as never),
  });
}

function open(metadata = new grpc.Metadata()) {
  return raw.makeBidiStreamRequest(
    '/inference.GRPCInferenceService/ModelStreamInfer',
    (value: ReturnType<typeof request>) => Buffer.from(toBinary(ModelInferRequestSchema, value)),
    (bytes: Buffer) => fromBinary(ModelStreamInferResponseSchema, bytes),
    metadata,
  );
}

/** Sends the requests, half-closes, and collects every message until the stream ends. */
async function exchange(requests: ReturnType<typeof request>[]): Promise<ModelStreamInferResponse[]> {
  const call = open();
  for (const message of requests) call.write(message);
  call.end();
  const out: ModelStreamInferResponse[] = [];
  for await (const message of call as AsyncIterable<ModelStreamInferResponse>) out.push(message);
  return out;
}

const final = (message: ModelStreamInferResponse) =>
  message.inferResponse?.parameters.triton_final_response?.parameterChoice.value;
const outValue = (message: ModelStreamInferResponse) =>
  new Int32Array(new Uint8Array(message.inferResponse?.rawOutputContents[0] ?? []).slice().buffer)[0];

describe('ModelStreamInfer with the decoupled repeat model', () => {
  it('sends one response per value, then the empty final response when asked', async () => {
    const messages = await exchange([
      request('repeat', 'r1', [int32('IN', [4, 5, 6])], { triton_enable_empty_final_response: true }),
    ]);
    expect(messages.map((m) => m.errorMessage)).toEqual(['', '', '', '']);
    expect(messages.map((m) => m.inferResponse?.id)).toEqual(['r1', 'r1', 'r1', 'r1']);
    expect(messages.slice(0, 3).map(outValue)).toEqual([4, 5, 6]);
    expect(messages.map(final)).toEqual([false, false, false, true]);
    expect(messages[3]?.inferResponse?.outputs).toEqual([]);
    expect(server.responses('repeat')).toBe(3);
  });

  it('sends no final response unless asked, and nothing but the final flag for an empty IN', async () => {
    expect((await exchange([request('repeat', 'a', [int32('IN', [1, 2])])])).map(final)).toEqual([
      false,
      false,
    ]);
    const empty = await exchange([
      request('repeat', 'b', [int32('IN', [])], { triton_enable_empty_final_response: true }),
    ]);
    expect(empty.map(final)).toEqual([true]);
  });

  it('reports an error_message for one request and keeps serving the others', async () => {
    const messages = await exchange([
      request('repeat', 'bad', [int32('IN', [1, 2, 3])], { error_after: 1 }),
      request('nope', 'missing', []),
      request('repeat', 'good', [int32('IN', [7]), uint32('DELAY', [30])], {
        triton_enable_empty_final_response: true,
      }),
    ]);
    const byId = (id: string) => messages.filter((m) => m.inferResponse?.id === id);
    expect(byId('bad').map((m) => m.errorMessage)).toEqual([
      '',
      'repeat: failing after 1 responses as asked',
    ]);
    expect(byId('missing')[0]?.errorMessage).toBe("Request for unknown model: 'nope' is not found");
    expect(byId('good').map(final)).toEqual([false, true]);
    expect(outValue(byId('good')[0] as ModelStreamInferResponse)).toBe(7);
  });

  it('marks the one response of a non-decoupled model final', async () => {
    const messages = await exchange([request('fail', 'f', [int32('INPUT0', [3])], { fail_code: 0 })]);
    expect(messages.map(final)).toEqual([true]);
    expect(messages[0]?.inferResponse?.modelName).toBe('fail');
  });

  it('stops producing when the client cancels the stream', async () => {
    const call = open();
    call.on('error', () => {});
    const seen: ModelStreamInferResponse[] = [];
    call.on('data', (message: ModelStreamInferResponse) => seen.push(message));
    // 8 responses, 200 ms apart: cancelled after the second, long before the natural end.
    call.write(
      request('repeat', 'long', [int32('IN', [1, 2, 3, 4, 5, 6, 7, 8]), uint32('DELAY', Array(8).fill(200))]),
    );
    await expect.poll(() => seen.length).toBeGreaterThanOrEqual(2);
    call.cancel();
    await expect.poll(() => server.cancellations('repeat')).toBe(1);
    // Nothing in flight: the execution has ended and can produce nothing more; it stopped early.
    await expect.poll(() => server.stats('repeat').inFlight).toBe(0);
    expect(server.responses('repeat')).toBeLessThan(8);
  });

  it('answers ModelInfer on a decoupled model like Triton', async () => {
    const error = await client
      .infer('repeat', [{ name: 'IN', datatype: 'INT32', data: [1] }])
      .catch((e: InfergateError) => e);
    expect((error as InfergateError).code).toBe('UNIMPLEMENTED');
    expect((error as InfergateError).message).toContain(
      "ModelInfer RPC doesn't support models with decoupled transaction policy",
    );
    const config = await client.modelConfig('repeat');
    expect(config.modelTransactionPolicy?.decoupled).toBe(true);
  });

  it('records per-response statistics for the decoupled model', async () => {
    await exchange([request('repeat', 's', [int32('IN', [1, 2])])]);
    const stats = server.modelStatistics('repeat');
    expect([...stats.responseStats.keys()]).toEqual(['0', '1']);
    expect(stats.responseStats.get('0')?.success.count).toBe(1);
    expect(stats.executionCount).toBe(1);
  });
});

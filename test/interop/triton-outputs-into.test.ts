// Outputs decoded into memory the caller gives (`RequestedOutput.into`, decision 0026) against real
// Triton: `identity_fp32_py` answers a 1 MiB FP32 tensor into a Float32Array of the caller's, on the
// default http2 engine (pooled receive memory), on grpc-js, over HTTP, and with the input staged
// through system shared memory; an answer bigger than `into` fails typed.
import { createTritonClient, ErrorCode, InfergateError, type TritonClient } from '@infergate/core';
import { createHttpClient } from '@infergate/core/http';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedTritonClients } from './shared-triton.js';

const { triton, client } = sharedTritonClients();
const MODEL = 'identity_fp32_py';
const ELEMENTS = 262_144;
const data = Float32Array.from({ length: ELEMENTS }, (_, index) => index * 0.25 - 3);
const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, ELEMENTS], data }];

const others: { close(): Promise<void> | void }[] = [];
afterAll(async () => {
  for (const other of others) await other.close();
});

function mismatches(received: Float32Array): number {
  let count = 0;
  for (let index = 0; index < ELEMENTS; index++) if (received[index] !== data[index]) count++;
  return count;
}

async function roundTrip(target: Pick<TritonClient, 'infer'>): Promise<void> {
  const into = new Float32Array(ELEMENTS);
  const result = await target.infer(MODEL, inputs, { outputs: [{ name: 'OUTPUT0', into }] });
  const output = result.output('OUTPUT0');
  expect(output.data).toBe(into);
  expect(output.shape).toEqual([1, ELEMENTS]);
  expect(mismatches(into)).toBe(0);
}

describe('outputs into caller memory against Triton', () => {
  it('the default http2 engine writes a 1 MiB output into the caller Float32Array', async () => {
    await roundTrip(client);
    await roundTrip(client);
  });

  it('grpc-js', async () => {
    const grpcJs = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: false, engine: 'grpc-js' });
    others.push(grpcJs);
    await roundTrip(grpcJs);
  });

  it('HTTP/REST with binary tensors', async () => {
    const http = createHttpClient({ url: `http://${triton.httpAddress}` });
    others.push(http);
    await roundTrip(http);
  });

  it('GPU IPC on: the input through system shared memory, the output into the caller array', async () => {
    const staged = createTritonClient({ url: triton.grpcAddress, sharedMemory: { thresholdBytes: 1024 } });
    others.push(staged);
    await roundTrip(staged);
    expect(staged.grpc.sharedMemory?.stats).toMatchObject({ sharedMemoryCalls: 1 });
  });

  it('fails an answer bigger than `into` with OUT_OF_RANGE, writing nothing', async () => {
    const into = new Float32Array(16).fill(5);
    const error = await client.infer(MODEL, inputs, { outputs: [{ name: 'OUTPUT0', into }] }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe(ErrorCode.OutOfRange);
    expect((error as InfergateError).message).toContain(`output 'OUTPUT0' is ${ELEMENTS * 4} bytes`);
    expect(into.every((value) => value === 5)).toBe(true);
  });
});

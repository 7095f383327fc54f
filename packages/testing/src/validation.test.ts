import {
  createTritonClient,
  type InfergateError,
  type InputTensor,
  type TritonClient,
} from '@infergate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer;
let client: TritonClient;

beforeAll(async () => {
  server = await startTestServer({
    models: [
      {
        name: 'typed',
        versions: ['1', '3'],
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', dims: [2] },
          { name: 'TEXT', datatype: 'BYTES', dims: [-1], optional: true },
        ],
        outputs: [{ name: 'OUTPUT0', datatype: 'INT32', dims: [2] }],
        execute: (request) => [{ ...request.input('INPUT0'), name: 'OUTPUT0' }],
      },
    ],
  });
  client = createTritonClient({ url: server.url });
});

afterAll(async () => {
  await client.close();
  await server.stop();
});

async function failure(model: string, inputs: InputTensor[], options = {}): Promise<InfergateError> {
  try {
    await client.infer(model, inputs, options);
  } catch (error) {
    return error as InfergateError;
  }
  throw new Error('expected the call to fail');
}

const int32 = (data: number[], shape = [data.length]): InputTensor => ({
  name: 'INPUT0',
  datatype: 'INT32',
  shape,
  data,
});

describe('validation', () => {
  it('answers NOT_FOUND for an unknown model, with Triton wording', async () => {
    const error = await failure('nope', [int32([1, 2])]);
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toContain("Request for unknown model: 'nope' is not found");
  });

  it('answers NOT_FOUND for an unknown version, and serves the latest by default', async () => {
    const error = await failure('typed', [int32([1, 2])], { modelVersion: '2' });
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toContain("Request for unknown model: 'typed' version 2 is not found");
    expect((await client.infer('typed', [int32([1, 2])])).modelVersion).toBe('3');
    expect((await client.infer('typed', [int32([1, 2])], { modelVersion: '1' })).modelVersion).toBe('1');
  });

  it('rejects a wrong datatype', async () => {
    const error = await failure('typed', [{ name: 'INPUT0', datatype: 'FP32', data: [1, 2] }]);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain(
      "unexpected datatype TYPE_FP32 for inference input 'INPUT0', expecting TYPE_INT32",
    );
  });

  it('rejects a missing required input but not a missing optional one', async () => {
    const error = await failure('typed', [{ name: 'TEXT', datatype: 'BYTES', data: ['a'] }]);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain("missing required input(s) ['INPUT0']");
    await expect(client.infer('typed', [int32([1, 2])])).resolves.toBeDefined();
  });

  it('rejects an input the model does not have', async () => {
    const error = await failure('typed', [int32([1, 2]), { name: 'EXTRA', datatype: 'INT32', data: [1] }]);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain("unexpected inference input 'EXTRA' for model 'typed'");
  });

  it('rejects a shape that does not match the dims', async () => {
    const error = await failure('typed', [int32([1, 2, 3])]);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain(
      "unexpected shape for input 'INPUT0' for model 'typed'. Expected [2], got [3]",
    );
  });

  it('rejects raw bytes that do not match the shape', async () => {
    const error = await failureRaw();
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain(
      "input byte size mismatch for input 'INPUT0' for model 'typed'. Expected 8, got 6",
    );
  });

  it('rejects BYTES data whose element count does not match the shape', async () => {
    const error = await failureRawBytes();
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain(
      "expected 2 string elements for inference input 'TEXT' for model 'typed', got 1",
    );
  });

  it('rejects a requested output the model does not have', async () => {
    const error = await failure('typed', [int32([1, 2])], { outputs: ['NOPE'] });
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain("unexpected inference output 'NOPE' for model 'typed'");
  });
});

/** The client checks byte lengths itself, so these go straight to the transport with bad bytes. */
async function failureRaw(): Promise<InfergateError> {
  return sendRaw({ name: 'INPUT0', datatype: 'INT32', shape: [2], raw: new Uint8Array(6) }, []);
}

async function failureRawBytes(): Promise<InfergateError> {
  const oneElement = new Uint8Array([1, 0, 0, 0, 97]);
  return sendRaw({ name: 'INPUT0', datatype: 'INT32', shape: [2], raw: new Uint8Array(8) }, [
    { name: 'TEXT', datatype: 'BYTES', shape: [2], raw: oneElement },
  ]);
}

async function sendRaw(
  first: { name: string; datatype: 'INT32'; shape: number[]; raw: Uint8Array },
  rest: { name: string; datatype: 'BYTES'; shape: number[]; raw: Uint8Array }[],
): Promise<InfergateError> {
  try {
    await client.grpc.infer({ model: 'typed', inputs: [first, ...rest] });
  } catch (error) {
    return error as InfergateError;
  }
  throw new Error('expected the call to fail');
}

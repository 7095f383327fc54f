import { createTritonClient, type InfergateError } from '@infergate/core';
import { type ModelDefinition, startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Answers a one-element request with `BYTES_OUT` bytes: a response far larger than its request. */
const BYTES_OUT = 64 * 1024;
const bigAnswer: ModelDefinition = {
  name: 'big_answer',
  inputs: [{ name: 'INPUT0', datatype: 'INT32', dims: [1] }],
  outputs: [{ name: 'OUTPUT0', datatype: 'UINT8', dims: [-1] }],
  execute: () => [
    { name: 'OUTPUT0', datatype: 'UINT8', shape: [BYTES_OUT], data: new Uint8Array(BYTES_OUT) },
  ],
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ models: [bigAnswer] });
});
afterAll(async () => {
  await server.stop();
});

describe('messages over maxMessageBytes', () => {
  it('refuses a request over the limit before sending it: INVALID_ARGUMENT, not retryable, names the option', async () => {
    const client = createTritonClient({ url: `127.0.0.1:${server.port}`, maxMessageBytes: 16 * 1024 });
    try {
      const before = server.calls.length;
      const error = (await client
        .infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: new Float32Array(8 * 1024) }])
        .catch((e) => e)) as InfergateError;
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.retryable).toBe(false);
      expect(error.rawMessage).toMatch(/over maxMessageBytes \(16384\)/);
      expect(error.rawMessage).toContain('raise');
      expect(error.details).toMatchObject({
        option: 'maxMessageBytes',
        limit: 16 * 1024,
        direction: 'request',
      });
      expect(server.calls.length).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('a response over the limit is INVALID_ARGUMENT, not retryable, and names the option', async () => {
    const client = createTritonClient({ url: `127.0.0.1:${server.port}`, maxMessageBytes: 16 * 1024 });
    try {
      const error = (await client
        .infer('big_answer', [{ name: 'INPUT0', datatype: 'INT32', data: [1] }])
        .catch((e) => e)) as InfergateError;
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.retryable).toBe(false);
      expect(error.rawMessage).toContain('Received message larger than max');
      expect(error.rawMessage).toContain('maxMessageBytes');
      expect(error.details).toMatchObject({ option: 'maxMessageBytes' });
    } finally {
      await client.close();
    }
  });
});

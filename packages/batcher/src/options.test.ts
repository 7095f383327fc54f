import { ErrorCode, InfergateError } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { EchoTransport } from './internal/testing/echo-transport.js';
import { createMicroBatcher } from './micro-batcher.js';
import { resolveMicroBatcherOptions } from './options.js';

describe('micro-batcher options', () => {
  it('fills in the documented defaults', () => {
    expect(resolveMicroBatcherOptions()).toEqual({
      maxBatchSize: 64,
      maxQueueDelayMs: 10,
      flush: 'adaptive',
      serverBatching: 'measure',
      statsIntervalMs: 1000,
      maxInFlightBatches: 2,
      maxQueueSize: 1024,
      maxQueueBytes: 256 * 1024 * 1024,
      tenants: {},
      models: {},
      maxBisectRpcs: 32,
      tracing: true,
    });
  });

  it('fails with INVALID_ARGUMENT naming every bad field', () => {
    let error: unknown;
    try {
      createMicroBatcher(new EchoTransport(), {
        maxBatchSize: 0,
        flush: 'eager' as 'fixed',
        tenants: { a: { weight: -1 } },
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InfergateError);
    expect(error).toMatchObject({ code: ErrorCode.InvalidArgument });
    const message = (error as Error).message;
    for (const field of ['maxBatchSize', 'flush', 'tenants.a.weight']) expect(message).toContain(field);
  });

  it('rejects unknown options', () => {
    expect(() => createMicroBatcher(new EchoTransport(), { maxDelay: 5 } as never)).toThrow(/maxDelay/);
  });
});

// Which grpc-js channelOptions the http2 engine honours, and when inference goes over grpc-js instead.
import { createGrpcTransport, ErrorCode, InfergateError } from '@infergate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { backoff, closeAll } from './http2-engine-test-servers.js';

afterEach(closeAll);

describe('channelOptions with the http2 engine', () => {
  it('honours the reconnect backoff and keepalive keys, and refuses any other key with INVALID_ARGUMENT naming it', () => {
    const honoured = createGrpcTransport({
      url: '127.0.0.1:1',
      engine: 'http2',
      channelOptions: {
        ...backoff,
        'grpc.keepalive_time_ms': 1000,
        'grpc.keepalive_permit_without_calls': 1,
      },
    });
    expect(honoured.engine).toBe('http2');
    void honoured.close();
    let error: unknown;
    try {
      createGrpcTransport({
        url: '127.0.0.1:1',
        engine: 'http2',
        channelOptions: { 'grpc.enable_channelz': 0, 'grpc.max_reconnect_backoff_ms': 100 },
      });
    } catch (failure) {
      error = failure;
    }
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe(ErrorCode.InvalidArgument);
    expect((error as InfergateError).message).toContain("'grpc.enable_channelz'");
    expect((error as InfergateError).message).not.toContain('max_reconnect');
    expect(() =>
      createGrpcTransport({
        url: '127.0.0.1:1',
        engine: 'http2',
        channelOptions: { 'grpc.keepalive_time_ms': 'soon' },
      }),
    ).toThrow(/grpc\.keepalive_time_ms/);
  });

  it('is the default engine, and grpc-js carries inference instead when channelOptions hold a key it does not honour', async () => {
    const plain = createGrpcTransport({ url: '127.0.0.1:1' });
    const tuned = createGrpcTransport({ url: '127.0.0.1:1', channelOptions: backoff });
    const foreign = createGrpcTransport({ url: '127.0.0.1:1', channelOptions: { 'grpc.enable_retries': 0 } });
    expect([plain.engine, tuned.engine, foreign.engine]).toEqual(['http2', 'http2', 'grpc-js']);
    await Promise.all([plain.close(), tuned.close(), foreign.close()]);
  });

  it('keeps grpc-js when asked for it, whatever channelOptions hold', async () => {
    const transport = createGrpcTransport({
      url: '127.0.0.1:1',
      engine: 'grpc-js',
      channelOptions: { 'grpc.enable_channelz': 0 },
    });
    expect(transport.engine).toBe('grpc-js');
    await transport.close();
  });
});

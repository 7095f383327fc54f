import { describe, expect, it } from 'vitest';
import packageJson from '../package.json' with { type: 'json' };
import { createTritonClient } from './client.js';
import { createGrpcTransport } from './create-grpc-transport.js';
import { InfergateError } from './errors.js';
import { clientOptionsSchema, parseEndpoint, parseOptions } from './options.js';
import { param, toWireParameter } from './parameters.js';
import { VERSION } from './version.js';

describe('client options', () => {
  it('fills documented defaults', () => {
    const options = parseOptions(clientOptionsSchema(), { url: '127.0.0.1:8001' }, 'client options');
    expect(options.enableGpuIpc).toBe(true);
    expect(options.maxMessageBytes).toBe(2 ** 31 - 1);
    expect(options.keepalive.timeMs).toBe(30_000);
    expect(options.tracing).toBe(true);
  });

  it('names every bad field in one INVALID_ARGUMENT error', () => {
    expect(() => createTritonClient({ url: '', timeoutMs: -5 } as never)).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/url.*timeoutMs/s),
      }),
    );
    expect(() => createTritonClient({ url: 'h:1', colour: 'red' } as never)).toThrow(
      /Unrecognized key.*colour/,
    );
    expect(() => createTritonClient({ url: 'not a url' })).toThrow(/invalid url 'not a url'/);
    // serviceName was never read; it is gone rather than silently ignored.
    expect(() => createTritonClient({ url: 'h:1', serviceName: 'x' } as never)).toThrow(/serviceName/);
  });

  it('refuses a symbol key in a record option with the same INVALID_ARGUMENT error, naming the key', () => {
    const key = Symbol('tenant');
    const create = [
      (options: object) => createTritonClient({ url: 'h:1', ...options }),
      (options: object) => createGrpcTransport({ url: 'h:1', ...options }),
    ];
    for (const make of create) {
      for (const [field, record] of [
        ['headers', { authorization: 'Bearer t', [key]: 'v' }],
        ['channelOptions', { [key]: 1 }],
      ] as const) {
        let thrown: unknown;
        try {
          make({ [field]: record });
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(InfergateError);
        expect(thrown).toMatchObject({
          code: 'INVALID_ARGUMENT',
          rawMessage: expect.stringMatching(`^invalid .*options: ${field}\\.Symbol\\(tenant\\): `),
        });
      }
    }
  });

  it('parses endpoints with and without scheme', () => {
    expect(parseEndpoint('localhost:8001')).toMatchObject({
      target: 'localhost:8001',
      secure: false,
      port: 8001,
    });
    expect(parseEndpoint('grpcs://triton.example:443')).toMatchObject({
      secure: true,
      host: 'triton.example',
    });
    expect(parseEndpoint('grpc://[::1]:9000')).toMatchObject({ target: '[::1]:9000', host: '::1' });
    expect(parseEndpoint('triton')).toMatchObject({ target: 'triton:8001' });
  });
});

describe('parameters', () => {
  it('maps JavaScript values to InferParameter kinds', () => {
    expect(toWireParameter('a', true)).toEqual({ case: 'boolParam', value: true });
    expect(toWireParameter('a', 'x')).toEqual({ case: 'stringParam', value: 'x' });
    expect(toWireParameter('a', 3)).toEqual({ case: 'int64Param', value: 3n });
    expect(toWireParameter('a', 0.5)).toEqual({ case: 'doubleParam', value: 0.5 });
    expect(toWireParameter('a', 2n ** 63n)).toEqual({ case: 'uint64Param', value: 2n ** 63n });
    expect(toWireParameter('a', param.double(2))).toEqual({ case: 'doubleParam', value: 2 });
    expect(toWireParameter('a', param.uint64(7))).toEqual({ case: 'uint64Param', value: 7n });
    expect(() => toWireParameter('a', 2n ** 64n)).toThrow(/parameter 'a'/);
  });
});

describe('version', () => {
  it('matches package.json', () => {
    expect(VERSION).toBe(packageJson.version);
  });
});

import { assertSafeHeaders, createTritonClient } from '@infergate/core';
import { createHttpClient, type HttpClient, InfergateError } from '@infergate/core/http';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

// Per-call headers over HTTP/REST are judged as over gRPC where their make is concerned: a symbol
// key, a Map, an array or a string would be dropped or read by index (an array went out as a header
// named "0"), so they are refused with assertSafeHeaders's INVALID_ARGUMENT before anything is sent.
// Names and values that fetch sends as they were given (a Latin-1 value among them) still go.

let server: TestServer;
let client: HttpClient;
/** Asks the server's metadata before its first inference: that request must not go either. */
let auto: HttpClient;

beforeAll(async () => {
  server = await startTestServer({ http: true });
  // binaryData fixed, so that an inference is one request (no metadata request ahead of it).
  client = createHttpClient({ url: server.httpUrl, binaryData: true });
  auto = createHttpClient({ url: server.httpUrl });
});

afterAll(async () => {
  await client?.close();
  await auto?.close();
  await server?.stop();
});

beforeEach(() => server.reset());

const input = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 2], data: new Float32Array([1, 2]) }];

/** The error the gRPC transports give for these headers (they call assertSafeHeaders). */
function expectedRefusal(headers: unknown, what = 'call headers'): InfergateError {
  try {
    assertSafeHeaders(headers as never, what);
  } catch (error) {
    return error as InfergateError;
  }
  throw new Error('assertSafeHeaders took these headers');
}

const oddShapes: [string, () => unknown][] = [
  ['a symbol key', () => ({ 'x-tenant': 'a', [Symbol('trace')]: 'b' })],
  ['a Map', () => new Map([['x-tenant', 'a']])],
  ['an array', () => ['a']],
  ['a string', () => 'x-tenant'],
  ['a value that is not a string', () => ({ 'x-tenant': 5 })],
];

describe('HTTP transport: per-call headers of another make', () => {
  for (const [what, headers] of oddShapes) {
    it(`refuses ${what} with INVALID_ARGUMENT before anything is sent, as the gRPC transport does`, async () => {
      const expected = expectedRefusal(headers());
      const calls: [string, (options: { headers: never }) => Promise<unknown>][] = [
        ['infer', (options) => client.infer('identity', input, options)],
        ["infer with binaryData 'auto'", (options) => auto.infer('identity', input, options)],
        ['serverLive', (options) => client.serverLive(options)],
        ['modelMetadata', (options) => client.modelMetadata('identity', options)],
        ['generate', (options) => client.generate('generate', { text_input: 'a' }, options)],
        [
          'generateStream',
          async (options) => {
            for await (const _ of client.generateStream(
              'generate',
              { text_input: 'a', stream: true },
              options,
            )) {
              // nothing is expected
            }
          },
        ],
      ];
      for (const [name, call] of calls) {
        const error = await call({ headers: headers() as never }).catch((thrown: unknown) => thrown);
        expect(error, name).toBeInstanceOf(InfergateError);
        expect((error as InfergateError).code, name).toBe('INVALID_ARGUMENT');
        expect((error as InfergateError).retryable, name).toBe(false);
        expect((error as InfergateError).rawMessage, name).toBe(expected.rawMessage);
      }
      expect(server.calls).toEqual([]);
    });
  }

  it('refuses them with the message the gRPC transport gives', async () => {
    const grpc = createTritonClient({ url: server.url });
    try {
      for (const [what, headers] of oddShapes) {
        const overGrpc = await grpc
          .infer('identity', input, { headers: headers() as never })
          .catch((thrown: unknown) => thrown);
        const overHttp = await client
          .infer('identity', input, { headers: headers() as never })
          .catch((thrown: unknown) => thrown);
        expect(overHttp, what).toBeInstanceOf(InfergateError);
        expect((overHttp as InfergateError).code, what).toBe((overGrpc as InfergateError).code);
        expect((overHttp as InfergateError).rawMessage, what).toBe((overGrpc as InfergateError).rawMessage);
      }
    } finally {
      await grpc.close();
    }
    expect(server.calls).toEqual([]);
  });

  it('sends the headers fetch sends as given: any case, a tab, a Latin-1 value, no prototype', async () => {
    const noPrototype = Object.assign(Object.create(null) as Record<string, string>, { 'x-bare': 'yes' });
    const hidden = Object.defineProperty({ 'x-seen': '1' }, Symbol('hidden'), {
      value: 'v',
      enumerable: false,
    });
    for (const headers of [{ 'X-Tenant': 'acme', 'x-tab': 'a\tb', 'x-name': 'é' }, noPrototype, hidden]) {
      await expect(client.infer('identity', input, { headers })).resolves.toBeDefined();
    }
    const seen = server.calls.map((call) => call.metadata);
    expect(seen).toHaveLength(3);
    expect(seen[0]).toMatchObject({ 'x-tenant': 'acme', 'x-tab': 'a\tb', 'x-name': 'é' });
    expect(seen[1]).toMatchObject({ 'x-bare': 'yes' });
    expect(seen[2]).toMatchObject({ 'x-seen': '1' });
    // The transport's own headers still go with them (the binary body is read by its header length).
    expect(seen[0]).toMatchObject({ 'content-type': 'application/octet-stream' });
  });

  it('generateStream still asks for server-sent events, and call headers still go with it', async () => {
    const texts: string[] = [];
    for await (const event of client.generateStream(
      'generate',
      { text_input: 'one two', stream: true },
      { headers: { 'x-tenant': 'acme' } },
    )) {
      texts.push(String(event.text_output));
    }
    expect(texts.join('')).toBe('one two');
    const [call] = server.calls;
    expect(call?.metadata).toMatchObject({ accept: 'text/event-stream', 'x-tenant': 'acme' });
  });
});

// fetch refuses some names and values itself (CR, LF, NUL, a name that is not a token, a character
// over U+00FF) with a TypeError that quotes the value: that was mapped as a network failure
// (UNAVAILABLE, retryable) whose message carried the value, a credential as often as not.
describe('HTTP transport: header names and values fetch cannot send', () => {
  const unsendable: [string, Record<string, string>][] = [
    ['a CR/LF in a value', { authorization: 'Bearer tok-SECRET\r\nx-admin: yes' }],
    ['a NUL in a value', { authorization: 'tok-SECRET\u0000' }],
    ['a character over U+00FF in a value', { authorization: 'tok-SECRET€' }],
    ['a name that is not a token', { 'x tenant': 'tok-SECRET' }],
  ];

  for (const [what, headers] of unsendable) {
    it(`call headers with ${what}: INVALID_ARGUMENT before anything is sent, the value not shown`, async () => {
      // Only the header at fault is named, not a Latin-1 one before it that fetch sends.
      const expected = expectedRefusal(headers);
      for (const call of [
        () => client.infer('identity', input, { headers: { 'x-before': 'é', ...headers } }),
        () => client.serverLive({ headers: { 'x-before': 'é', ...headers } }),
      ]) {
        const error = await call().catch((thrown: unknown) => thrown);
        expect(error).toBeInstanceOf(InfergateError);
        expect((error as InfergateError).code).toBe('INVALID_ARGUMENT');
        expect((error as InfergateError).retryable).toBe(false);
        expect((error as InfergateError).rawMessage).toBe(expected.rawMessage);
        expect(JSON.stringify(error)).not.toContain('SECRET');
        expect(String((error as InfergateError).cause ?? '')).not.toContain('SECRET');
      }
      expect(server.calls).toEqual([]);
    });

    it(`client headers with ${what}: INVALID_ARGUMENT when the client is made, the value not shown`, () => {
      const error = (() => {
        try {
          createHttpClient({ url: server.httpUrl, headers });
        } catch (thrown) {
          return thrown;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(InfergateError);
      expect((error as InfergateError).code).toBe('INVALID_ARGUMENT');
      expect((error as InfergateError).rawMessage).toBe(expectedRefusal(headers, 'headers').rawMessage);
      expect(JSON.stringify(error)).not.toContain('SECRET');
    });
  }

  it('an access token fetch cannot send is refused when the client is made, naming accessToken', () => {
    const error = (() => {
      try {
        createHttpClient({ url: server.httpUrl, accessToken: 'tok-SECRET\r\nx-admin: yes' });
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe('INVALID_ARGUMENT');
    expect((error as InfergateError).rawMessage).toContain('accessToken');
    expect(JSON.stringify(error)).not.toContain('SECRET');
  });

  it('client headers and an access token fetch sends as given still go, Latin-1 among them', async () => {
    const latin = createHttpClient({
      url: server.httpUrl,
      binaryData: true,
      headers: { 'X-Client': 'é', 'x-tab': 'a\tb' },
      accessToken: 'tok',
    });
    try {
      await expect(latin.infer('identity', input)).resolves.toBeDefined();
    } finally {
      await latin.close();
    }
    expect(server.calls[0]?.metadata).toMatchObject({
      'x-client': 'é',
      'x-tab': 'a\tb',
      'triton-access-token': 'tok',
    });
  });
});

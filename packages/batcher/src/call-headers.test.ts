import { assertSafeHeaders, type CallOptions, type InferRequest, type InferResponse } from '@infergate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { EchoTransport, fp32, requestOf } from './internal/testing/echo-transport.js';
import { createMicroBatcher, type MicroBatcher } from './micro-batcher.js';

// Per-call headers refuse a symbol key and anything but a plain object with INVALID_ARGUMENT
// (core's assertSafeHeaders, which core's transports apply to the headers they send). A batch is
// sent with its first member's headers, and calls join a batch by what their headers' string keys
// and values say, so a call whose headers the transport would refuse could ride in a batch behind a
// call with clean ones, and be answered as if its headers had been fine.

/** An echo transport that checks the headers it is given as core's transports do. */
class CheckingTransport extends EchoTransport {
  override infer(request: InferRequest, options: CallOptions): Promise<InferResponse> {
    try {
      if (options.headers !== undefined) assertSafeHeaders(options.headers, 'call headers');
    } catch (error) {
      return Promise.reject(error);
    }
    return super.infer(request, options);
  }
}

let batcher: MicroBatcher | undefined;
afterEach(async () => {
  await batcher?.close();
  batcher = undefined;
});

const input = (seed: number) => requestOf('m', fp32('INPUT0', 1, 2, seed));

describe('call headers through a batcher', () => {
  const refused: [string, () => Record<string, string>][] = [
    ['a symbol key', () => Object.assign({ 'x-tenant': 'a' }, { [Symbol('trace')]: 'b' })],
    [
      'a Map',
      () =>
        Object.assign(new Map([['x-tenant', 'a']]), { 'x-tenant': 'a' }) as unknown as Record<string, string>,
    ],
    ['an array', () => Object.assign(['a'], { 'x-tenant': 'a' }) as unknown as Record<string, string>],
  ];

  for (const [what, headers] of refused) {
    it(`refuses headers with ${what} with INVALID_ARGUMENT, also behind a call with clean headers`, async () => {
      const transport = new CheckingTransport();
      batcher = createMicroBatcher(transport, { flush: 'fixed', maxBatchSize: 2, maxQueueDelayMs: 50 });
      const clean = batcher.infer(input(1), { headers: { 'x-tenant': 'a' } });
      const odd = batcher.infer(input(2), { headers: headers() });
      await expect(odd).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      // The clean call is answered whatever the other did.
      await expect(clean).resolves.toBeDefined();
      // No request went out carrying the refused headers.
      for (const call of transport.calls) expect(call.options.headers).toEqual({ 'x-tenant': 'a' });
    });
  }

  it('leaves names and values to the transport (they are in the batch key)', async () => {
    // An echo transport that takes any header, as a transport of the caller's own might.
    const transport = new EchoTransport();
    batcher = createMicroBatcher(transport, { flush: 'fixed', maxBatchSize: 2, maxQueueDelayMs: 50 });
    const latin = batcher.infer(input(1), { headers: { 'x-name': 'é' } });
    const clean = batcher.infer(input(2), { headers: { 'x-name': 'e' } });
    await expect(latin).resolves.toBeDefined();
    await expect(clean).resolves.toBeDefined();
    // Different values, different batches: each went with its own headers.
    const sent = transport.calls.map((call) => call.options.headers);
    expect(sent).toHaveLength(2);
    expect(sent).toEqual(expect.arrayContaining([{ 'x-name': 'é' }, { 'x-name': 'e' }]));
  });

  it('refuses the same headers alone as the transport does', async () => {
    const transport = new CheckingTransport();
    batcher = createMicroBatcher(transport, { flush: 'fixed', maxBatchSize: 1 });
    const headers = Object.assign({}, { [Symbol('trace')]: 'b' });
    const direct = await transport.infer(input(1), { headers }).catch((error: unknown) => error);
    const batched = await batcher.infer(input(1), { headers }).catch((error: unknown) => error);
    expect(batched).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(String(batched)).toBe(String(direct));
  });
});

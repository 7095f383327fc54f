import { createTritonClient, type InfergateError, type TritonClient } from '@infergate/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FaultInjector } from './fault-injector.js';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer;
let client: TritonClient;

beforeAll(async () => {
  server = await startTestServer();
  client = createTritonClient({ url: server.url });
});

beforeEach(() => server.reset());

afterAll(async () => {
  await client.close();
  await server.stop();
});

const echo = () => client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: [1, 2] }]);

async function settle(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'OK';
  } catch (error) {
    return (error as InfergateError).code;
  }
}

describe('fault injection', () => {
  it('makes a healthy model fail the next N requests, then recovers', async () => {
    server.faults.set('identity', { code: 'UNAVAILABLE', message: 'chaos', times: 2 });
    const outcomes = [await settle(echo()), await settle(echo()), await settle(echo())];
    expect(outcomes).toEqual(['UNAVAILABLE', 'UNAVAILABLE', 'OK']);
    expect(server.faults.applied('identity')).toBe(2);
    expect(server.faults.remaining('identity')).toBe(0);
    expect(server.executions('identity')).toBe(1);
    expect(server.stats('identity').failures).toBe(2);
  });

  it('takes gRPC status numbers and keeps failing until cleared', async () => {
    server.faults.set('identity', { code: 8 });
    expect(await settle(echo())).toBe('RESOURCE_EXHAUSTED');
    expect(await settle(echo())).toBe('RESOURCE_EXHAUSTED');
    server.faults.clear('identity');
    expect(await settle(echo())).toBe('OK');
  });

  it("applies a '*' fault to every model without one of its own", async () => {
    server.faults.set('*', { code: 'INTERNAL', times: 1 });
    server.faults.set('add_sub', { code: 'ABORTED', times: 1 });
    expect(await settle(echo())).toBe('INTERNAL');
    expect(await settle(client.infer('add_sub', []))).toBe('ABORTED');
    expect(await settle(echo())).toBe('OK');
  });

  it('delays requests without failing them', async () => {
    server.faults.set('identity', { delayMs: 40, times: 1 });
    expect(await settle(echo())).toBe('OK');
    // The delay holds the answer: a minute's delay outlasts a 100 ms deadline, however busy the machine.
    server.faults.set('identity', { delayMs: 60_000, times: 1 });
    const held = client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: [1, 2] }], {
      timeoutMs: 100,
    });
    expect(await settle(held)).toBe('DEADLINE_EXCEEDED');
  });

  it('sends malformed responses the client reports as DATA_LOSS', async () => {
    server.faults.set('identity', { malformed: true, times: 1 });
    await expect(echo()).rejects.toMatchObject({ code: 'DATA_LOSS' });
    expect((await echo()).output('OUTPUT0').toArray()).toEqual([1, 2]);
  });
});

describe('FaultInjector', () => {
  it('validates faults', () => {
    const faults = new FaultInjector();
    expect(() => faults.set('m', { code: 'NOPE' as 'INTERNAL' })).toThrow(RangeError);
    expect(() => faults.set('m', { code: 17 })).toThrow(RangeError);
    expect(() => faults.set('m', { times: 0 })).toThrow(RangeError);
    expect(faults.take('m')).toBeUndefined();
  });
});

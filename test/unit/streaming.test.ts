import { createTritonClient, InfergateError, type InferResult, type TritonClient } from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: TestServer;
let client: TritonClient;

beforeAll(async () => {
  server = await startTestServer();
  client = createTritonClient({ url: server.url, timeoutMs: 20_000 });
});

afterAll(async () => {
  await client.close();
  await server.stop();
});

function repeatInputs(values: number[], delayMs = 0) {
  return [
    { name: 'IN', datatype: 'INT32' as const, shape: [values.length], data: values },
    ...(delayMs > 0
      ? [
          {
            name: 'DELAY',
            datatype: 'UINT32' as const,
            shape: [values.length],
            data: values.map(() => delayMs),
          },
        ]
      : []),
  ];
}

async function collect(iterable: AsyncIterable<InferResult>): Promise<number[]> {
  const out: number[] = [];
  for await (const result of iterable) out.push((result.output('OUT').data as Int32Array)[0] as number);
  return out;
}

describe('inferStream on a decoupled model', () => {
  it('yields N responses and ends on the final flag', async () => {
    expect(await collect(client.inferStream('repeat', repeatInputs([4, 5, 6, 7])))).toEqual([4, 5, 6, 7]);
  });

  it('handles 1 and 0 responses', async () => {
    expect(await collect(client.inferStream('repeat', repeatInputs([9])))).toEqual([9]);
    expect(await collect(client.inferStream('repeat', repeatInputs([])))).toEqual([]);
  });

  it('works for a plain model too (one response)', async () => {
    const results: InferResult[] = [];
    for await (const result of client.inferStream('identity', [
      { name: 'INPUT0', datatype: 'FP32', data: [1, 2] },
    ])) {
      results.push(result);
    }
    expect(results).toHaveLength(1);
    expect(results[0]?.output('OUTPUT0').toArray()).toEqual([1, 2]);
  });

  it('surfaces a mid-stream error as a typed error after the responses before it', async () => {
    const seen: number[] = [];
    const error = await (async () => {
      for await (const result of client.inferStream('repeat', repeatInputs([1, 2, 3, 4]), {
        parameters: { error_after: 2 },
      })) {
        seen.push((result.output('OUT').data as Int32Array)[0] as number);
      }
    })().catch((e) => e);
    expect(seen).toEqual([1, 2]);
    expect(error).toBeInstanceOf(InfergateError);
    expect(error.message).toContain('failing after 2 responses');
    expect(error.model).toBe('repeat');
  });

  it('leaving the loop early cancels the RPC and the server stops producing', async () => {
    const before = server.stats('repeat');
    const values = Array.from({ length: 40 }, (_, i) => i);
    let taken = 0;
    for await (const _ of client.inferStream('repeat', repeatInputs(values, 25))) {
      if (++taken === 2) break;
    }
    await expect.poll(() => server.cancellations('repeat')).toBeGreaterThan(before.cancellations);
    // Nothing in flight: the execution has ended, so it can produce nothing more; it stopped early.
    await expect.poll(() => server.stats('repeat').inFlight).toBe(0);
    expect(server.stats('repeat').responses - before.responses).toBeLessThan(values.length);
  });

  it('aborting the signal cancels with CANCELLED', async () => {
    const controller = new AbortController();
    const values = Array.from({ length: 40 }, (_, i) => i);
    const error = await (async () => {
      for await (const _ of client.inferStream('repeat', repeatInputs(values, 25), {
        signal: controller.signal,
      })) {
        controller.abort();
      }
    })().catch((e) => e);
    expect(error.code).toBe('CANCELLED');
  });

  it('unary infer on a decoupled model is refused by the server', async () => {
    const error = await client.infer('repeat', repeatInputs([1])).catch((e) => e);
    expect(error).toBeInstanceOf(InfergateError);
    expect(error.message).toMatch(/decoupled/);
  });
});

describe('openStream session', () => {
  it('matches responses to concurrent requests by id; one failing does not end the others', async () => {
    const session = client.openStream();
    const a = collect(session.infer('repeat', repeatInputs([1, 2, 3], 5)));
    const b = collect(session.infer('repeat', repeatInputs([10, 20], 3)));
    const failing = collect(
      session.infer('repeat', repeatInputs([7, 8, 9]), { parameters: { error_after: 1 } }),
    );
    const c = collect(session.infer('repeat', repeatInputs([100])));
    expect(await failing.catch((error) => error.message)).toMatch(/failing after 1/);
    expect(await a).toEqual([1, 2, 3]);
    expect(await b).toEqual([10, 20]);
    expect(await c).toEqual([100]);
    expect(session.pending).toBe(0);
    await session.close();
  });

  it('refuses a duplicate request id in flight and new requests after close', async () => {
    const session = client.openStream();
    const first = collect(session.infer('repeat', repeatInputs([1], 20), { requestId: 'same' }));
    expect(() => session.infer('repeat', repeatInputs([1]), { requestId: 'same' })).toThrow(
      /already in flight/,
    );
    expect(await first).toEqual([1]);
    await session.close();
    expect(() => session.infer('repeat', repeatInputs([1]))).toThrow(/closing/);
  });

  it('cancel() fails the unfinished requests with CANCELLED', async () => {
    const session = client.openStream();
    // A second per response: the request is still running when cancel() comes, however busy the machine.
    const slow = collect(session.infer('repeat', repeatInputs([1, 2, 3, 4, 5], 1_000)));
    await expect.poll(() => server.stats('repeat').inFlight).toBe(1);
    session.cancel();
    expect(await slow.catch((error) => error.code)).toBe('CANCELLED');
  });
});

describe('sequences', () => {
  it('sequence() allocates an id, marks START and END, and the state accumulates', async () => {
    const sequence = await client.sequence('accumulate');
    expect(typeof sequence.id).toBe('number');
    const send = async (value: number, end = false) => {
      const inputs = [{ name: 'INPUT', datatype: 'INT32' as const, shape: [1, 1], data: [value] }];
      const result = end ? await sequence.end(inputs) : await sequence.infer(inputs);
      return (result.output('OUTPUT').data as Int32Array)[0];
    };
    expect(await send(1)).toBe(1);
    expect(await send(2)).toBe(3);
    expect(await send(3, true)).toBe(6);
    expect(sequence.ended).toBe(true);
    await expect(
      sequence.infer([{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [1] }]),
    ).rejects.toMatchObject({
      code: 'FAILED_PRECONDITION',
    });
  });

  it('keeps interleaved sequences apart, with number, bigint and string ids', async () => {
    const ids = [17, 2n ** 40n, 'session-abc'] as const;
    const sequences = await Promise.all(ids.map((id) => client.sequence('accumulate', { id })));
    const input = (value: number) => [
      { name: 'INPUT', datatype: 'INT32' as const, shape: [1, 1], data: [value] },
    ];
    for (let step = 1; step <= 3; step++) {
      for (const [index, sequence] of sequences.entries()) await sequence.infer(input(index + 1));
    }
    const totals = await Promise.all(
      sequences.map(async (sequence) => (await sequence.end(input(0))).output('OUTPUT').toArray()[0]),
    );
    expect(totals).toEqual([3, 6, 9]);
  });

  it('a request for an unknown sequence without START is INVALID_ARGUMENT', async () => {
    const error = await client
      .infer('accumulate', [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [1] }], {
        sequenceId: 987654,
      })
      .catch((e) => e);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toMatch(/START/);
  });

  it('validates sequence options before the network', async () => {
    const before = server.stats('accumulate').requests;
    await expect(client.infer('accumulate', [], { sequenceStart: true })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(client.infer('accumulate', [], { sequenceId: -1 })).rejects.toThrow(
      /positive integer or a string/,
    );
    expect(server.stats('accumulate').requests).toBe(before);
  });

  it('stays on one endpoint when the client balances over several', async () => {
    const second = await startTestServer();
    const balanced = createTritonClient({ url: [server.url, second.url] });
    try {
      for (let run = 0; run < 3; run++) {
        const sequence = await balanced.sequence('accumulate');
        for (let i = 0; i < 4; i++)
          await sequence.infer([{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [1] }]);
        const total = await sequence.end([{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [1] }]);
        expect(total.output('OUTPUT').toArray()).toEqual([5]);
      }
    } finally {
      await balanced.close();
      await second.stop();
    }
  });
});

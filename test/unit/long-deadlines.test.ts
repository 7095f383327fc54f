import { once } from 'node:events';
import { createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createTritonClient, type TritonClient } from '@infergate/core';
import { createHttpClient } from '@infergate/core/http';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

// setTimeout takes at most 2^31 − 1 ms: a longer deadline used to fire after 1 ms (with a
// TimeoutOverflowWarning), so a call with timeoutMs 3e9 failed DEADLINE_EXCEEDED at once. Each call
// here takes 50 ms on the server (model `fail`'s delay), so a deadline that fired early ends it.
// A finite deadline of any size is a real one; Infinity is none (no timer, no grpc-timeout).

const LONG = [3e9, 1e15, Number.POSITIVE_INFINITY];
const SLOW_OK = { parameters: { fail_code: 0, delay_ms: 50 } };

/**
 * On the fake clock: past the first timer step of 2^31 − 1 ms and up to 1 ms before `deadlineMs`
 * the call is still running; at `deadlineMs` it fails DEADLINE_EXCEEDED.
 */
async function expectDeadlineAt(
  call: Promise<unknown>,
  settled: () => void,
  deadlineMs: number,
): Promise<void> {
  await vi.advanceTimersByTimeAsync(2 ** 31);
  expect(settled).not.toHaveBeenCalled();
  await vi.advanceTimersByTimeAsync(deadlineMs - 2 ** 31 - 1);
  expect(settled).not.toHaveBeenCalled();
  await vi.advanceTimersByTimeAsync(1);
  await expect(call).rejects.toMatchObject({ code: 'DEADLINE_EXCEEDED' });
}

/** Waits for `condition` on real time (setImmediate turns, at most 10 s), whatever the fake clock. */
async function untilReal(condition: () => boolean): Promise<void> {
  const bound = performance.now() + 10_000;
  while (!condition()) {
    if (performance.now() > bound) throw new Error('the condition did not hold within 10 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

let server: TestServer;
const warnings: Error[] = [];
const onWarning = (warning: Error) => {
  if (warning.name === 'TimeoutOverflowWarning') warnings.push(warning);
};

beforeAll(async () => {
  server = await startTestServer({ http: true });
});

afterAll(async () => {
  await server?.stop();
});

beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});

afterEach(async () => {
  // Warnings are emitted on the next tick.
  await new Promise((resolve) => setImmediate(resolve));
  process.off('warning', onWarning);
  expect(warnings.map((warning) => warning.message)).toEqual([]);
});

describe.each(['http2', 'grpc-js'] as const)('a deadline beyond 2^31 − 1 ms on the %s engine', (engine) => {
  let client: TritonClient;
  beforeAll(() => {
    client = createTritonClient({ url: server.url, engine, enableGpuIpc: false });
  });
  afterAll(async () => {
    await client?.close();
  });

  for (const timeoutMs of LONG) {
    it(`infers with timeoutMs ${timeoutMs}`, async () => {
      const result = await client.infer('fail', [], { ...SLOW_OK, timeoutMs });
      expect(result.outputs.map((output) => output.name)).toEqual(['OUTPUT0']);
    });
  }

  it('runs a management call with timeoutMs 3e9 and Infinity', async () => {
    expect(await client.modelReady('fail', { timeoutMs: 3e9 })).toBe(true);
    expect(await client.modelReady('fail', { timeoutMs: Number.POSITIVE_INFINITY })).toBe(true);
  });

  it('lifts the client default deadline for one call with timeoutMs Infinity', async () => {
    const bounded = createTritonClient({ url: server.url, engine, enableGpuIpc: false, timeoutMs: 10 });
    try {
      const result = await bounded.infer('fail', [], {
        parameters: { fail_code: 0, delay_ms: 100 },
        timeoutMs: Number.POSITIVE_INFINITY,
      });
      expect(result.outputs).toHaveLength(1);
    } finally {
      await bounded.close();
    }
  });
});

describe.each(['http2', 'grpc-js'] as const)(
  'the %s engine ends a call at a deadline beyond 2^31 − 1 ms',
  (engine) => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('when it is due, not before', async () => {
      const client = createTritonClient({ url: server.url, engine, enableGpuIpc: false });
      try {
        await client.modelReady('fail');
        const before = server.stats('fail').requests;
        // setTimeout only: the sockets, setImmediate and the poll below run on real time.
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
        const settled = vi.fn();
        // The server would answer in 4e9 ms (on the fake clock too): only the deadline ends the call.
        const call = client.infer('fail', [], {
          parameters: { fail_code: 0, delay_ms: 4e9 },
          timeoutMs: 3e9,
        });
        call.then(settled, settled);
        // Polled on real time: expect.poll would move the fake clock.
        await untilReal(() => server.stats('fail').requests === before + 1);
        await new Promise((resolve) => setImmediate(resolve));
        await expectDeadlineAt(call, settled, 3e9);
      } finally {
        vi.useRealTimers();
        await client.close();
      }
    });
  },
);

describe('the grpc-js engine against a server that ignores grpc-timeout', () => {
  // grpc-js arms no timer of its own for a deadline past 2^31 − 1 ms: the client's does.
  let peer: Http2Server;
  beforeAll(async () => {
    peer = createServer();
    // Answers headers, then nothing: only the client's deadline ends a call.
    peer.on('stream', (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.on('error', () => {});
    });
    peer.listen(0, '127.0.0.1');
    await once(peer, 'listening');
  });
  afterAll(async () => {
    await new Promise((resolve) => peer.close(resolve));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(['unary', 'stream'] as const)(
    'ends a %s call when its deadline is due, not before',
    async (kind) => {
      const { port } = peer.address() as AddressInfo;
      // No keepalive: its ping's answer needs the network, which the fake clock outruns.
      const client = createTritonClient({
        url: `127.0.0.1:${port}`,
        engine: 'grpc-js',
        enableGpuIpc: false,
        channelOptions: { 'grpc.keepalive_time_ms': 0 },
      });
      try {
        await client.grpc.ready();
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
        const settled = vi.fn();
        const options = { timeoutMs: 3e9 };
        const call =
          kind === 'unary'
            ? client.infer('m', [], options)
            : (async () => {
                for await (const _ of client.inferStream('m', [], options));
              })();
        call.then(settled, settled);
        await new Promise((resolve) => setImmediate(resolve));
        await expectDeadlineAt(call, settled, 3e9);
      } finally {
        vi.useRealTimers();
        await client.close();
      }
    },
  );
});

describe("the reference server's grpc-js transport", () => {
  // grpc-js's server read a grpc-timeout over 2^31 − 1 ms as a negative 32-bit number and ended
  // the call at once; the reference server drops such a header (the client's deadline holds).
  it('answers a call whose grpc-timeout is over 2^31 − 1 ms', async () => {
    const legacy = await startTestServer({ transport: 'grpc-js' });
    const client = createTritonClient({ url: legacy.url, enableGpuIpc: false });
    try {
      // 2^31 − 1 ms goes as 2147484S (over 1e8 ms the http2 engine sends seconds, rounded up).
      for (const timeoutMs of [2 ** 31 - 1, 3e9]) {
        const result = await client.infer('fail', [], { ...SLOW_OK, timeoutMs });
        expect(result.outputs).toHaveLength(1);
      }
    } finally {
      await client.close();
      await legacy.stop();
    }
  });
});

describe('a deadline beyond 2^31 − 1 ms on the HTTP client', () => {
  for (const timeoutMs of LONG) {
    it(`infers with timeoutMs ${timeoutMs}`, async () => {
      const client = createHttpClient({ url: server.httpUrl });
      try {
        const result = await client.infer('fail', [], { ...SLOW_OK, timeoutMs });
        expect(result.outputs.map((output) => output.name)).toEqual(['OUTPUT0']);
      } finally {
        await client.close();
      }
    });
  }
});

describe('grpc-timeout for long deadlines', () => {
  let peer: Http2Server;
  const seen: (string | undefined)[] = [];
  beforeAll(async () => {
    // Records each call's grpc-timeout and answers UNIMPLEMENTED.
    peer = createServer();
    peer.on('stream', (stream, headers) => {
      seen.push(headers['grpc-timeout'] as string | undefined);
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' },
        { endStream: true },
      );
    });
    peer.listen(0, '127.0.0.1');
    await once(peer, 'listening');
  });
  afterAll(async () => {
    await new Promise((resolve) => peer.close(resolve));
  });

  it.each(['http2', 'grpc-js'] as const)('%s sends one for 3e9 ms and none for Infinity', async (engine) => {
    const { port } = peer.address() as AddressInfo;
    const client = createTritonClient({
      url: `127.0.0.1:${port}`,
      engine,
      enableGpuIpc: false,
      timeoutMs: 5000,
    });
    try {
      seen.length = 0;
      for (const timeoutMs of [3e9, Number.POSITIVE_INFINITY]) {
        await expect(client.infer('m', [], { timeoutMs })).rejects.toMatchObject({ code: 'UNIMPLEMENTED' });
      }
      expect(seen).toHaveLength(2);
      // 3e9 ms is 3,000,000 s, which grpc-timeout's 8 digits carry in seconds.
      expect(seen[0]).toBe('3000000S');
      expect(seen[1]).toBeUndefined();
    } finally {
      await client.close();
    }
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTritonClient, InfergateError } from '@infergate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// An HTTP/1 server where a gRPC one was expected, as Triton's HTTP port (8000) is.
let http1: Server;
let port: number;
beforeAll(async () => {
  http1 = createServer((_request, response) => {
    response.statusCode = 400;
    response.end('{"error":"not HTTP/2"}');
  });
  await new Promise<void>((resolve) => http1.listen(0, '127.0.0.1', resolve));
  port = (http1.address() as AddressInfo).port;
});
afterAll(async () => {
  http1.closeAllConnections();
  await new Promise((resolve) => http1.close(resolve));
});

describe('a gRPC client pointed at an HTTP/1 port', () => {
  it('fails at once, not retryable, saying it looks like an HTTP port (host:port and http://)', async () => {
    for (const url of [`127.0.0.1:${port}`, `http://127.0.0.1:${port}`]) {
      const client = createTritonClient({ url, timeoutMs: 10_000 });
      try {
        for (const call of [
          () => client.serverLive(),
          () => client.infer('identity', [{ name: 'INPUT0', datatype: 'INT32', data: [1] }]),
        ]) {
          const error = await call().catch((e: unknown) => e);
          expect(error).toBeInstanceOf(InfergateError);
          const typed = error as InfergateError;
          expect(typed.code).toBe('FAILED_PRECONDITION');
          expect(typed.retryable).toBe(false);
          expect(typed.rawMessage).toContain(
            "this looks like an HTTP port; Triton's gRPC port is usually 8001",
          );
        }
      } finally {
        await client.close();
      }
    }
  });
});

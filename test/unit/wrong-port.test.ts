import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { createTritonClient, InfergateError } from '@infergate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// An HTTP/1 server where a gRPC one was expected, as Triton's HTTP port (8000) is.
let http1: Server;
let port: number;
/** Closes an HTTP/2 preface without a word, as Triton's HTTP port does, but answers HTTP/1. */
let closesHttp2: TcpServer;
/** Closes every connection: a broken server, not a wrong port. */
let closesAll: TcpServer;

async function listen(server: TcpServer | Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  closesHttp2 = createTcpServer((socket) => {
    socket.once('data', (chunk) => {
      if (chunk.toString('latin1').startsWith('PRI * HTTP/2.0')) socket.destroy();
      else socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    });
    socket.on('error', () => {});
  });
  closesAll = createTcpServer((socket) => {
    socket.on('error', () => {});
    socket.destroy();
  });
  await listen(closesHttp2);
  await listen(closesAll);
  http1 = createServer((_request, response) => {
    response.statusCode = 400;
    response.end('{"error":"not HTTP/2"}');
  });
  await new Promise<void>((resolve) => http1.listen(0, '127.0.0.1', resolve));
  port = (http1.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => closesHttp2.close(resolve));
  await new Promise((resolve) => closesAll.close(resolve));
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

  it('a port that drops the HTTP/2 preface but answers HTTP/1 is named an HTTP port too', async () => {
    const client = createTritonClient({ url: `127.0.0.1:${(closesHttp2.address() as AddressInfo).port}` });
    try {
      const error = (await client.serverLive().catch((e: unknown) => e)) as InfergateError;
      expect(error.code).toBe('FAILED_PRECONDITION');
      expect(error.retryable).toBe(false);
      expect(error.rawMessage).toContain("this looks like an HTTP port; Triton's gRPC port is usually 8001");
    } finally {
      await client.close();
    }
  });

  it('a server that closes every connection stays UNAVAILABLE and retryable', async () => {
    const client = createTritonClient({ url: `127.0.0.1:${(closesAll.address() as AddressInfo).port}` });
    try {
      const error = (await client.serverLive().catch((e: unknown) => e)) as InfergateError;
      expect(error.code).toBe('UNAVAILABLE');
      expect(error.retryable).toBe(true);
    } finally {
      await client.close();
    }
  });
});

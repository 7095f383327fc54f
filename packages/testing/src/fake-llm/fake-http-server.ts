import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clearLongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';
import { type FakeLlmFault, FaultSlot } from './fake-faults.js';

/** One request as the fake server saw it. Credentials are replaced by `fakeKeyMarker(key)`. */
export interface FakeLlmRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
}

const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key', 'api-key']);

/**
 * What a recorded credential header holds instead of the key: a short hash, so a test can tell
 * which key was sent without the key being stored anywhere.
 */
export function fakeKeyMarker(key: string): string {
  return `[redacted:${createHash('sha256').update(key).digest('hex').slice(0, 8)}]`;
}

function redactHeader(name: string, value: string): string {
  if (!CREDENTIAL_HEADERS.has(name)) return value;
  const bearer = /^Bearer\s+(.*)$/i.exec(value);
  return bearer ? `Bearer ${fakeKeyMarker(bearer[1] ?? '')}` : fakeKeyMarker(value);
}

/** The common handle of both fake providers. */
export interface FakeLlmServer {
  /** Base URL (http://127.0.0.1:port/v1 for OpenAI, http://127.0.0.1:port for Anthropic). */
  readonly url: string;
  /** Every request, oldest first. */
  readonly requests: readonly FakeLlmRequest[];
  /** Requests to the chat endpoint. */
  readonly calls: number;
  /** Responses whose connection closed before the server finished writing them (client aborts). */
  readonly disconnects: number;
  /** How many calls the current and earlier faults hit. */
  readonly faultHits: number;
  setFault(fault: FakeLlmFault | undefined): void;
  /** Forgets requests and counts and clears the fault. */
  reset(): void;
  /** Stops listening and drops open connections; the same verb as the test server's `stop()`. */
  stop(): Promise<void>;
  /** @deprecated Use `stop()`; removed in 1.0. */
  close(): Promise<void>;
}

export interface ExchangeContext {
  request: IncomingMessage;
  response: ServerResponse;
  body: unknown;
  fault: FakeLlmFault | undefined;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
}

export type ExchangeHandler = (context: ExchangeContext) => Promise<void>;

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Waits `ms` unless the client left first (then resolves early with false). */
export function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (!(ms > 0) || signal.aborted) return Promise.resolve(!signal.aborted);
  // A fault's delay of any length (setTimeout fires one over 2^31 − 1 ms after 1 ms).
  return new Promise((resolve) => {
    const onAbort = () => {
      clearLongTimer(timer);
      resolve(false);
    };
    const timer = setLongTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Starts a node:http server on 127.0.0.1 (a free port) that hands `chatPath` POSTs to `handle`. */
export async function startFakeHttpServer(
  chatPath: string,
  basePath: string,
  handle: ExchangeHandler,
): Promise<FakeLlmServer> {
  const requests: FakeLlmRequest[] = [];
  const fault = new FaultSlot();
  let calls = 0;
  let disconnects = 0;
  const server: Server = createServer((request, response) => {
    const controller = new AbortController();
    response.on('close', () => {
      if (!response.writableFinished) {
        disconnects++;
        controller.abort();
      }
    });
    void (async () => {
      const body = await readBody(request);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string') headers[name] = redactHeader(name, value);
      }
      const path = (request.url ?? '/').split('?')[0] ?? '/';
      requests.push({ method: request.method ?? 'GET', path, headers, body });
      if (request.method !== 'POST' || path !== chatPath) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ error: { message: `no route ${request.method} ${path}`, type: 'not_found' } }),
        );
        return;
      }
      calls++;
      await handle({ request, response, body, fault: fault.take(), signal: controller.signal });
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    requests,
    get calls() {
      return calls;
    },
    get disconnects() {
      return disconnects;
    },
    get faultHits() {
      return fault.hits;
    },
    setFault(next) {
      fault.set(next);
    },
    reset() {
      requests.length = 0;
      calls = 0;
      disconnects = 0;
      fault.set(undefined);
      fault.hits = 0;
    },
    stop,
    close: stop,
  };
}

/** Writes a JSON response. */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/** Starts an SSE response. */
export function startSse(response: ServerResponse): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  response.flushHeaders();
}

/** Writes one SSE frame (`event:` line only when named). */
export function writeSse(response: ServerResponse, data: unknown, event?: string): void {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  response.write(`${event === undefined ? '' : `event: ${event}\n`}data: ${payload}\n\n`);
}

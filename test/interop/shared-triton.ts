// The interop run's one Triton (started by global-setup.ts), as the test files see it.
// Most Triton files: `const { triton, client } = sharedTritonClients()`; the others call
// `sharedTriton()` and `printLogTailOnFailure()` themselves.
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { createTritonClient, type TritonClient } from '@infergate/core';
import { afterAll, afterEach, beforeEach, inject } from 'vitest';
import type { SharedTritonInfo } from './triton-context.js';

export type { SharedTritonInfo } from './triton-context.js';

const provided = () => inject('triton');

/** Why the shared server is not there, with the log tail; undefined when it runs. */
function startError(): Error | undefined {
  const triton = provided();
  if (!('error' in triton)) return undefined;
  const tail = logTail(80);
  const withTail =
    triton.error.includes('--- server log tail ---') || tail === ''
      ? triton.error
      : `${triton.error}\n--- server log tail (${triton.logFile}) ---\n${tail}`;
  return new Error(`The shared Triton (test/interop/global-setup.ts) did not start: ${withTail}`);
}

/**
 * The shared server's addresses and token. If Triton did not come up this returns an address where
 * nothing listens, and `printLogTailOnFailure()`'s beforeEach fails every test with the start error
 * and the server log tail: the tests fail, none is skipped (a throwing beforeAll would skip them).
 */
export function sharedTriton(): SharedTritonInfo {
  const triton = provided();
  if ('error' in triton) {
    return {
      grpcAddress: '127.0.0.1:1',
      httpAddress: '127.0.0.1:1',
      metricsAddress: '127.0.0.1:1',
      accessToken: 'none',
      logFile: triton.logFile,
    };
  }
  return triton;
}

/** True when the shared server came up (setup that talks to it should not run otherwise). */
export function tritonIsUp(): boolean {
  return !('error' in provided());
}

/** Size of the server log now, in bytes: pass it to logSince()/waitForLog() to skip older lines. */
export function logSize(): number {
  const { logFile } = provided();
  return existsSync(logFile) ? statSync(logFile).size : 0;
}

/** The server log from byte `offset` on ('' if there is none). */
export function logSince(offset = 0): string {
  const { logFile } = provided();
  if (!existsSync(logFile)) return '';
  const fd = openSync(logFile, 'r');
  try {
    const size = Math.max(0, statSync(logFile).size - offset);
    const buffer = Buffer.alloc(size);
    const read = readSync(fd, buffer, 0, size, offset);
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The last `lines` lines of the shared server's log (the whole run's, from the log file). */
export function logTail(lines = 60): string {
  const { logFile } = provided();
  if (!existsSync(logFile)) return '';
  return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the server log written after byte `since` for a line matching `pattern`. */
export async function waitForLog(pattern: RegExp, ms: number, since = 0): Promise<string | undefined> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const line = logSince(since)
      .split('\n')
      .find((l) => pattern.test(l));
    if (line !== undefined) return line;
    await sleep(100);
  }
  return undefined;
}

/**
 * Registers a beforeEach that fails each test when the shared Triton did not start, and an afterEach
 * that prints the server log tail when a test fails.
 */
export function printLogTailOnFailure(lines = 40): void {
  beforeEach(() => {
    const error = startError();
    if (error) throw error;
  });
  afterEach((context) => {
    if (context.task.result?.state === 'fail') {
      console.error(`--- Triton log tail after '${context.task.name}' ---\n${logTail(lines)}`);
    }
  });
}

/** The shared server and the two clients most Triton files use. */
export interface SharedTritonClients {
  triton: SharedTritonInfo;
  /** Plain gRPC (no automatic shared memory), no access token. */
  client: TritonClient;
  /** The same with the access token for the restricted `trace` and `logging` groups. */
  admin: TritonClient;
}

/**
 * A file's setup against the shared server: its clients (connecting at their first call), closed
 * after the file's tests once `cleanUp` put back what the tests may have left changed, and
 * `printLogTailOnFailure()`.
 */
export function sharedTritonClients(
  cleanUp?: (clients: SharedTritonClients) => Promise<void>,
): SharedTritonClients {
  const triton = sharedTriton();
  const client = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: false });
  const admin = createTritonClient({
    url: triton.grpcAddress,
    enableGpuIpc: false,
    accessToken: triton.accessToken,
  });
  const clients = { triton, client, admin };
  afterAll(async () => {
    try {
      await cleanUp?.(clients);
    } finally {
      await client.close();
      await admin.close();
    }
  });
  printLogTailOnFailure();
  return clients;
}

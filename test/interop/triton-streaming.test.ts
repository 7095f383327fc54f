// Decoupled streaming (repeat), stream sessions and cancellation.
// @infergate/core against the interop run's one real Triton 2.51 (PyTriton 0.7.0, CPU), started once
// for every file by global-setup.ts. See README.md in this folder.
import type { InfergateError, InferResult } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { logSize, sharedTritonClients, waitForLog } from './shared-triton.js';
import { caught, collect, repeatInputs } from './triton-helpers.js';

const { client, admin } = sharedTritonClients(async ({ admin }) => {
  // The cancellation test raises log_verbose_level and puts it back; make sure it is the default again.
  await admin.updateLogSettings({ log_verbose_level: 0 }).catch(() => {});
});

// ── decoupled streaming, stream sessions, cancellation ──────────────────────────────────────

describe('decoupled streaming (repeat)', () => {
  it('inferStream yields 0, 1 and N responses and ends on the final flag', async () => {
    expect(await collect(client.inferStream('repeat', repeatInputs(0)))).toEqual([]);
    expect(await collect(client.inferStream('repeat', repeatInputs(1)))).toEqual([0]);
    const results: InferResult[] = [];
    for await (const r of client.inferStream('repeat', repeatInputs(5), { requestId: 'five' }))
      results.push(r);
    expect(results.map((r) => r.output('OUT').toArray()[0])).toEqual([0, 1, 2, 3, 4]);
    for (const r of results) {
      expect(r.id).toBe('five');
      expect(r.model).toBe('repeat');
      expect(r.parameters.triton_final_response).toBe(false);
    }
  });

  it("a model error ends the stream with the model's message", async () => {
    const error = await caught(collect(client.inferStream('repeat', repeatInputs(-1))));
    expect(error.rawMessage).toContain('repeat: IN must be >= 0, got -1');
  });

  it('unary infer() on a decoupled model is UNIMPLEMENTED', async () => {
    const error = await caught(client.infer('repeat', repeatInputs(1)));
    expect(error.code).toBe('UNIMPLEMENTED');
    expect(error.rawMessage).toContain(
      "ModelInfer RPC doesn't support models with decoupled transaction policy",
    );
  });

  it('openStream: concurrent requests are matched by id and one failure ends only its own request', async () => {
    const session = client.openStream();
    const settle = async (iterable: AsyncIterable<InferResult>) => {
      const got: unknown[] = [];
      try {
        for await (const r of iterable) got.push(`${r.id}:${r.output('OUT').toArray()[0]}`);
        return got;
      } catch (error) {
        return [...got, (error as InfergateError).rawMessage.includes('IN must be >= 0') ? 'failed' : error];
      }
    };
    const results = await Promise.all([
      settle(session.infer('repeat', repeatInputs(3, 40))),
      settle(session.infer('repeat', repeatInputs(-1))),
      settle(session.infer('repeat', repeatInputs(2, 30), { requestId: 'mine' })),
      settle(session.infer('repeat', repeatInputs(0))),
      settle(session.infer('repeat', repeatInputs(4))),
    ]);
    expect(results).toEqual([
      ['infergate-1:0', 'infergate-1:1', 'infergate-1:2'],
      ['failed'],
      ['mine:0', 'mine:1'],
      [],
      ['infergate-4:0', 'infergate-4:1', 'infergate-4:2', 'infergate-4:3'],
    ]);
    expect(session.pending).toBe(0);
    await session.close();
  });

  it('leaving the loop early cancels the RPC: the client returns at once and Triton logs the cancellation', async () => {
    await admin.updateLogSettings({ log_verbose_level: 1 });
    // Only lines logged from here on count (the shared server's log holds the whole run).
    const since = logSize();
    try {
      const seen: unknown[] = [];
      // 20 responses, 100 ms apart: the loop returns after two; Triton's log shows the RPC cancelled
      // (server-side proof, no clock involved).
      for await (const r of client.inferStream('repeat', repeatInputs(20, 100), {
        requestId: 'leave-early',
      })) {
        seen.push(r.output('OUT').toArray()[0]);
        if (seen.length === 2) break;
      }
      expect(seen).toEqual([0, 1]);
      const line = await waitForLog(
        /Cancellation notification received for ModelStreamInferHandler/,
        15_000,
        since,
      );
      expect(line).toBeDefined();
      // PyTriton's callable keeps yielding; Triton drops what it sends for the cancelled call.
      expect(
        await waitForLog(/skipping response generation as grpc transaction was cancelled/, 15_000, since),
      ).toBeDefined();
    } finally {
      await admin.updateLogSettings({ log_verbose_level: 0 });
    }
  });

  it('aborting the signal rejects promptly with CANCELLED', async () => {
    const controller = new AbortController();
    const seen: unknown[] = [];
    // Abort on the first response (it may come late: PyTriton's callable of the stream cancelled just
    // before keeps the one instance busy); the stream then ends with CANCELLED, not its 20 responses.
    const error = await caught(
      (async () => {
        for await (const r of client.inferStream('repeat', repeatInputs(20, 100), {
          signal: controller.signal,
        })) {
          seen.push(r.output('OUT').toArray()[0]);
          controller.abort();
        }
      })(),
    );
    expect(error.code).toBe('CANCELLED');
    expect(seen).toEqual([0]);
  });

  it('StreamSession.cancel() fails the unfinished requests with CANCELLED', async () => {
    const session = client.openStream();
    const responses = session.infer('repeat', repeatInputs(20, 100))[Symbol.asyncIterator]();
    // Cancel once the request is under way (its first response is here), not after a guessed delay.
    expect((await responses.next()).done).toBe(false);
    session.cancel();
    const rest: unknown[] = [];
    const error = await caught(
      (async () => {
        for (let next = await responses.next(); !next.done; next = await responses.next())
          rest.push(next.value);
      })(),
    );
    expect(error.code).toBe('CANCELLED');
    expect(rest.length).toBeLessThan(19);
  });
});

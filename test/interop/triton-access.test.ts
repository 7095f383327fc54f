// Access token, compression, sequences, trace and log settings.
// @infergate/core against the interop run's one real Triton 2.51 (PyTriton 0.7.0, CPU), started once
// for every file by global-setup.ts. See README.md in this folder.
import { createTritonClient, type InferResult } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { sharedTritonClients } from './shared-triton.js';
import { caught, collect, repeatInputs } from './triton-helpers.js';

const { triton, client, admin } = sharedTritonClients(async ({ admin }) => {
  // The settings tests restore Triton's defaults themselves; do it again in case one failed half-way.
  await admin
    .updateTraceSettings({ trace_rate: null, trace_count: null, log_frequency: null })
    .catch(() => {});
  await admin.updateLogSettings({ log_info: true, log_verbose_level: 0 }).catch(() => {});
});

// ── access token, compression ─────────────────────────────────────────────────────────────

describe('access token and compression', () => {
  it('restricted logging/trace fail without the token and work with it', async () => {
    const denied = await caught(client.logSettings());
    expect(denied.rawMessage).toContain(
      "This protocol is restricted, expecting header 'triton-grpc-protocol-triton-access-token'",
    );
    expect((await caught(client.traceSettings())).rawMessage).toContain('This protocol is restricted');

    const wrong = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: false, accessToken: 'wrong' });
    try {
      expect((await caught(wrong.logSettings())).rawMessage).toContain('This protocol is restricted');
    } finally {
      await wrong.close();
    }
    expect(await admin.logSettings()).toMatchObject({ log_info: true, log_verbose_level: 0 });
    // The header can also be given per call.
    const viaHeader = await client.logSettings({
      headers: { 'triton-grpc-protocol-triton-access-token': triton.accessToken },
    });
    expect(viaHeader.log_error).toBe(true);
    // Unrestricted groups need no token. (Live, not ready: other files load and unload models on
    // the same Triton, and a loading model makes it not ready for a moment.)
    expect(await client.serverLive()).toBe(true);
  });

  it("a rejected token is reported as a permission problem, not as a retryable 'unavailable'", async () => {
    const denied = await caught(client.logSettings());
    // Triton answers UNAVAILABLE; a router would retry or fail over on it as if the server were down.
    expect(['PERMISSION_DENIED', 'UNAUTHENTICATED']).toContain(denied.code);
    expect(denied.retryable).toBe(false);
  });

  it("compression: 'gzip' requests are accepted and answered", async () => {
    const gzip = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: false, compression: 'gzip' });
    try {
      const data = new Float32Array(256 * 1024).fill(1.25); // 1 MiB, compresses well
      const output = (await gzip.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data }])).output(
        'OUTPUT0',
      );
      expect(Buffer.compare(Buffer.from(output.raw), Buffer.from(data.buffer))).toBe(0);
      expect(await gzip.serverLive()).toBe(true);
      expect(await collect(gzip.inferStream('repeat', repeatInputs(3)))).toEqual([0, 1, 2]);
    } finally {
      await gzip.close();
    }
  });
});

// ── sequences ─────────────────────────────────────────────────────────────────────────────

describe('sequences (accumulate)', () => {
  const value = (v: number) => [{ name: 'INPUT0', datatype: 'INT32' as const, shape: [1, 1], data: [v] }];
  const sum = (r: InferResult) => r.output('OUTPUT0').toArray()[0];

  it('client.sequence() keeps a running sum per sequence, START and END set for us', async () => {
    const a = await client.sequence('accumulate');
    const b = await client.sequence('accumulate');
    expect(sum(await a.infer(value(2)))).toBe(2);
    expect(sum(await b.infer(value(100)))).toBe(100);
    expect(sum(await a.infer(value(3)))).toBe(5);
    expect(sum(await b.end(value(1)))).toBe(101);
    expect(sum(await a.end(value(4)))).toBe(9);
    expect(a.ended).toBe(true);
    expect((await caught(a.infer(value(1)))).code).toBe('FAILED_PRECONDITION');
    // A given numeric id works too.
    const c = await client.sequence('accumulate', { id: 4242 });
    expect(sum(await c.infer(value(7)))).toBe(7);
    expect(sum(await c.end(value(1)))).toBe(8);
  });

  it('a request for a new sequence without START is rejected', async () => {
    const error = await caught(client.infer('accumulate', value(1), { sequenceId: 987_654 }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.rawMessage).toContain('must specify the START flag on the first request of the sequence');
    const missing = await caught(client.infer('sequence_echo', value(1)));
    expect(missing.code).toBe('INVALID_ARGUMENT');
    expect(missing.rawMessage).toContain('must specify a non-zero or non-empty correlation ID');
  });
});

// ── trace and log settings ────────────────────────────────────────────────────────────────

describe('trace and log settings (restricted: need the token)', () => {
  it('trace settings: get, update globally and per model, reset with null', async () => {
    const initial = await admin.traceSettings();
    expect(initial).toMatchObject({ trace_mode: ['triton'], trace_level: ['OFF'], trace_rate: ['1000'] });
    try {
      const updated = await admin.updateTraceSettings({ trace_rate: 5, trace_count: 10, log_frequency: 2 });
      expect(updated).toMatchObject({ trace_rate: ['5'], trace_count: ['10'], log_frequency: ['2'] });
      const model = await admin.updateTraceSettings({ trace_rate: 7 }, { model: 'identity_fp32' });
      expect(model.trace_rate).toEqual(['7']);
      expect((await admin.traceSettings()).trace_rate).toEqual(['5']);
      expect((await admin.traceSettings({ model: 'identity_fp32' })).trace_rate).toEqual(['7']);
      // null clears the model's own value: it falls back to the global one.
      expect(
        (await admin.updateTraceSettings({ trace_rate: null }, { model: 'identity_fp32' })).trace_rate,
      ).toEqual(['5']);
    } finally {
      const reset = await admin.updateTraceSettings({
        trace_rate: null,
        trace_count: null,
        log_frequency: null,
      });
      expect(reset).toMatchObject({ trace_rate: ['1000'], trace_count: ['-1'], log_frequency: ['0'] });
    }
  });

  it("trace settings Triton refuses keep Triton's reason in the error", async () => {
    // Triton answers UNIMPLEMENTED "trace file location can not be updated through network protocol".
    const error = await caught(admin.updateTraceSettings({ trace_file: '/tmp/infergate-trace.json' }));
    expect(error.code).toBe('UNIMPLEMENTED');
    expect(error.message).toContain('trace file location can not be updated');
  });

  it('log settings: get and update', async () => {
    const initial = await admin.logSettings();
    expect(initial).toEqual({
      log_info: true,
      log_warning: true,
      log_error: true,
      log_verbose_level: 0,
      log_format: 'default',
      log_file: '',
    });
    try {
      const updated = await admin.updateLogSettings({ log_info: false, log_verbose_level: 2 });
      expect(updated).toMatchObject({ log_info: false, log_verbose_level: 2 });
      expect(await admin.logSettings()).toMatchObject({ log_info: false, log_verbose_level: 2 });
    } finally {
      expect(await admin.updateLogSettings({ log_info: true, log_verbose_level: 0 })).toMatchObject({
        log_info: true,
        log_verbose_level: 0,
      });
    }
  });
});

import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { create } from '@bufbuild/protobuf';
import { createTritonClient, type InfergateError, type TritonClient } from '@infergate/core';
import { GRPCInferenceService } from '@infergate/core/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toWireParameters } from './internal/parameters.js';
import { shmPath } from './shared-memory.js';
import { startTestServer, type TestServer } from './test-server.js';

let server: TestServer;
let client: TritonClient;
const service = GRPCInferenceService.method;
const key = `/infergate-test-${randomUUID()}`;

beforeAll(async () => {
  server = await startTestServer();
  client = createTritonClient({ url: server.url });
  writeFileSync(shmPath(key), Buffer.alloc(64));
});

afterAll(async () => {
  await client.close();
  await server.stop();
  rmSync(shmPath(key), { force: true });
});

// Responses are read loosely here: each test looks at a few fields of several message types.
type Loose = ReturnType<typeof JSON.parse>;
type Method = Parameters<TritonClient['grpc']['unary']>[0];
const call = (name: keyof typeof service, init: object = {}): Promise<Loose> => {
  const method = service[name] as unknown as Method;
  return client.grpc.unary(method, create(method.input, init as never), {});
};
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: InfergateError) => error,
  );

describe('system shared memory', () => {
  it('registers, reports and unregisters regions', async () => {
    await call('systemSharedMemoryRegister', { name: 'r0', key, offset: 0n, byteSize: 32n });
    await call('systemSharedMemoryRegister', { name: 'r1', key, offset: 32n, byteSize: 32n });
    const status = await call('systemSharedMemoryStatus');
    expect(Object.keys(status.regions).sort()).toEqual(['r0', 'r1']);
    expect(status.regions.r1).toMatchObject({ key, offset: 32n, byteSize: 32n });
    const duplicate = await failure(call('systemSharedMemoryRegister', { name: 'r0', key, byteSize: 8n }));
    expect(duplicate?.code).toBe('ALREADY_EXISTS');
    const tooBig = await failure(
      call('systemSharedMemoryRegister', { name: 'big', key, offset: 60n, byteSize: 8n }),
    );
    expect(tooBig?.code).toBe('INVALID_ARGUMENT');
    expect(tooBig?.message).toContain("failed to register shared memory region 'big': invalid args");
    const missing = await failure(
      call('systemSharedMemoryRegister', { name: 'm', key: '/nope-x', byteSize: 8n }),
    );
    expect(missing?.message).toContain("Unable to open shared memory region: '/nope-x'");
    const unknown = await failure(call('systemSharedMemoryStatus', { name: 'zz' }));
    expect(unknown?.code).toBe('NOT_FOUND');
    expect(unknown?.message).toContain("Unable to find system shared memory region: 'zz'");
  });

  it('reads inputs from and writes outputs to regions, leaving empty raw contents like Triton', async () => {
    writeFileSync(
      shmPath(key),
      Buffer.from(new Float32Array([1, 2, 3, 4, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9]).buffer),
    );
    const shm = (region: string, byteSize: number) =>
      toWireParameters({ shared_memory_region: region, shared_memory_byte_size: byteSize });
    const response = await call('modelInfer', {
      modelName: 'add_sub',
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [1n, 16n], parameters: shm('r0', 64) },
        { name: 'INPUT1', datatype: 'FP32', shape: [1n, 16n] },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: shm('r1', 64) }, { name: 'OUTPUT1' }],
      rawInputContents: [new Uint8Array(new Float32Array(16).fill(1).buffer)],
    }).catch((error: unknown) => error);
    // r0 and r1 are 32 bytes each: a 64-byte input does not fit.
    expect((response as InfergateError).message).toContain(
      "Invalid offset + byte size for shared memory region: 'r0'",
    );
    await call('systemSharedMemoryUnregister');
    await call('systemSharedMemoryRegister', { name: 'in', key, offset: 0n, byteSize: 64n });
    writeFileSync(shmPath(key), Buffer.from(new Float32Array(32).map((_, i) => (i < 16 ? i : 0)).buffer));
    await call('systemSharedMemoryRegister', { name: 'out', key, offset: 64n, byteSize: 64n });
    const ok = await call('modelInfer', {
      modelName: 'add_sub',
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [1n, 16n], parameters: shm('in', 64) },
        { name: 'INPUT1', datatype: 'FP32', shape: [1n, 16n] },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: shm('out', 64) }, { name: 'OUTPUT1' }],
      rawInputContents: [new Uint8Array(new Float32Array(16).fill(1).buffer)],
    });
    expect(ok.outputs.map((o: { name: string }) => o.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
    expect(ok.outputs[0].shape).toEqual([1n, 16n]);
    expect(ok.rawOutputContents[0].byteLength).toBe(0);
    const difference = new Float32Array(new Uint8Array(ok.rawOutputContents[1]).slice().buffer);
    expect(difference[5]).toBe(4);
    const written = new Float32Array(Uint8Array.from(readFileSync(shmPath(key)).subarray(64, 128)).buffer);
    expect(written[5]).toBe(6);
    const unknown = await failure(
      call('modelInfer', {
        modelName: 'identity',
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n], parameters: shm('gone', 4) }],
      }),
    );
    expect(unknown?.code).toBe('NOT_FOUND');
    expect(unknown?.message).toContain("Unable to find shared memory region: 'gone'");
    await call('systemSharedMemoryUnregister', { name: 'in' });
    expect(server.sharedMemoryRegions().map((r) => r.name)).toEqual(['out']);
    await call('systemSharedMemoryUnregister');
    expect(server.sharedMemoryRegions()).toEqual([]);
  });

  it('answers CUDA shared memory like a CPU-only Triton', async () => {
    const error = await failure(call('cudaSharedMemoryRegister', { name: 'gpu0', byteSize: 8n }));
    expect(error?.code).toBe('INVALID_ARGUMENT');
    expect(error?.message).toContain(
      "failed to register CUDA shared memory region: 'gpu0', GPUs not supported",
    );
    expect((await call('cudaSharedMemoryStatus')).regions).toEqual({});
  });
});

describe('trace and log settings', () => {
  it('reports defaults and merges updates, per model too', async () => {
    const initial = await call('traceSetting');
    expect(initial.settings.trace_level.value).toEqual(['OFF']);
    expect(initial.settings.trace_rate.value).toEqual(['1000']);
    const updated = await call('traceSetting', {
      settings: { trace_level: { value: ['TIMESTAMPS'] }, trace_rate: { value: ['10'] } },
    });
    expect(updated.settings.trace_level.value).toEqual(['TIMESTAMPS']);
    expect(updated.settings.trace_count.value).toEqual(['-1']);
    const model = await call('traceSetting', {
      modelName: 'identity',
      settings: { trace_rate: { value: ['1'] } },
    });
    expect(model.settings.trace_rate.value).toEqual(['1']);
    expect(model.settings.trace_level.value).toEqual(['TIMESTAMPS']);
    expect(server.traceSettings().trace_rate).toEqual(['10']);
    const bad = await failure(call('traceSetting', { settings: { trace_file: { value: ['x'] } } }));
    expect(bad?.code).toBe('UNIMPLEMENTED');
    const unknown = await failure(call('traceSetting', { modelName: 'nope' }));
    expect(unknown?.message).toContain('Request for unknown model : nope');
  });

  it('reports and updates log settings with Triton types', async () => {
    const initial = await call('logSettings');
    expect(initial.settings.log_info.parameterChoice).toEqual({ case: 'boolParam', value: true });
    expect(initial.settings.log_verbose_level.parameterChoice).toEqual({ case: 'uint32Param', value: 0 });
    const updated = await call('logSettings', {
      settings: {
        log_verbose_level: { parameterChoice: { case: 'uint32Param', value: 2 } },
        log_format: { parameterChoice: { case: 'stringParam', value: 'ISO8601' } },
      },
    });
    expect(updated.settings.log_verbose_level.parameterChoice.value).toBe(2);
    expect(server.logSettings().log_format).toBe('ISO8601');
    const wrong = await failure(
      call('logSettings', {
        settings: { log_info: { parameterChoice: { case: 'stringParam', value: 'x' } } },
      }),
    );
    expect(wrong?.message).toContain("expect boolean for 'log_info'");
  });
});

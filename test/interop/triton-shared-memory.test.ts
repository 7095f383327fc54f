// System and CUDA shared memory, and the automatic regions of enableGpuIpc.
// @infergate/core against the interop run's one real Triton 2.51 (PyTriton 0.7.0, CPU), started once
// for every file by global-setup.ts. See README.md in this folder.
import { createTritonClient, SystemSharedMemoryRegion } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { sharedTritonClients } from './shared-triton.js';
import { caught } from './triton-helpers.js';

const { triton, client } = sharedTritonClients();

// ── shared memory ─────────────────────────────────────────────────────────────────────────

describe('system shared memory', () => {
  it('register, status, input bound to a region, unregister', async () => {
    const region = SystemSharedMemoryRegion.create({ byteSize: 256 });
    const name = `interop_in_${process.pid}`;
    try {
      await client.registerSystemSharedMemory({ name, key: region.key, byteSize: 256 });
      expect(await client.systemSharedMemoryStatus(name)).toEqual([
        { name, key: region.key, offset: 0, byteSize: 256 },
      ]);
      region.write(new Uint8Array(Float32Array.from([1, 2, 3, 4]).buffer), 64);
      const result = await client.infer('identity_fp32', [
        {
          name: 'INPUT0',
          datatype: 'FP32',
          shape: [4],
          sharedMemory: { region: name, byteSize: 16, offset: 64 },
        },
      ]);
      expect(result.output('OUTPUT0').toArray()).toEqual([1, 2, 3, 4]);
      await client.unregisterSystemSharedMemory(name);
      expect((await client.systemSharedMemoryStatus()).some((r) => r.name === name)).toBe(false);
    } finally {
      await client.unregisterSystemSharedMemory(name).catch(() => {});
      region.destroy();
    }
  });

  it('an output bound to a region is written there (input and output in one region)', async () => {
    const region = SystemSharedMemoryRegion.create({ byteSize: 128 });
    const name = `interop_io_${process.pid}`;
    try {
      await client.registerSystemSharedMemory({ name, key: region.key, byteSize: 128 });
      region.write(new Uint8Array(Float32Array.from([5, 6, 7, 8]).buffer), 0);
      const result = await client.infer(
        'identity_fp32',
        [{ name: 'INPUT0', datatype: 'FP32', shape: [4], sharedMemory: { region: name, byteSize: 16 } }],
        { outputs: [{ name: 'OUTPUT0', sharedMemory: { region: name, byteSize: 16, offset: 64 } }] },
      );
      const output = result.output('OUTPUT0');
      expect(output.shape).toEqual([4]);
      expect(output.raw.byteLength).toBe(0);
      expect(Array.from(new Float32Array(Uint8Array.from(region.read(64, 16)).buffer))).toEqual([5, 6, 7, 8]);
    } finally {
      await client.unregisterSystemSharedMemory(name).catch(() => {});
      region.destroy();
    }
  });

  it('CUDA shared memory on a CPU-only server: status is empty, registration is refused', async () => {
    expect(await client.cudaSharedMemoryStatus()).toEqual([]);
    const error = await caught(
      client.registerCudaSharedMemory({
        name: 'cuda0',
        rawHandle: new Uint8Array(64),
        deviceId: 0,
        byteSize: 64,
      }),
    );
    expect(error.rawMessage.length).toBeGreaterThan(0);
    await expect(client.unregisterCudaSharedMemory()).resolves.toBeUndefined();
  });

  it('enableGpuIpc: a large input travels through an automatically registered region', async () => {
    const ipc = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: true });
    try {
      const data = Float32Array.from({ length: 1024 * 1024 }, (_, i) => i); // 4 MiB > 1 MiB threshold
      const output = (await ipc.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data }])).output(
        'OUTPUT0',
      );
      expect(Buffer.compare(Buffer.from(output.raw), Buffer.from(data.buffer))).toBe(0);
      expect(ipc.grpc.sharedMemory?.regionCount ?? 0).toBeGreaterThan(0);
      const regions = await ipc.systemSharedMemoryStatus();
      expect(regions.some((r) => r.name.startsWith(`infergate_${process.pid}_`))).toBe(true);
      // Small inputs stay in the message.
      const small = await ipc.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data: [1, 2] }]);
      expect(small.output('OUTPUT0').toArray()).toEqual([1, 2]);
    } finally {
      await ipc.close();
    }
    // close() unregisters the pooled regions.
    const left = await client.systemSharedMemoryStatus();
    expect(left.some((r) => r.name.startsWith(`infergate_${process.pid}_`))).toBe(false);
  });
});

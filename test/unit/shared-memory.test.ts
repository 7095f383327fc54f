import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createTritonClient, SystemSharedMemoryRegion, type TritonClient } from '@infergate/core';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: TestServer;
let client: TritonClient;

beforeAll(async () => {
  server = await startTestServer();
  client = createTritonClient({ url: server.url, enableGpuIpc: false, timeoutMs: 60_000 });
});

afterAll(async () => {
  await client.close();
  await server.stop();
});

describe('system shared memory', () => {
  it('registers, lists and unregisters regions', async () => {
    const region = SystemSharedMemoryRegion.create({ byteSize: 1024 });
    try {
      await client.registerSystemSharedMemory({ name: 'r1', key: region.key, byteSize: 1024 });
      expect(await client.systemSharedMemoryStatus()).toEqual([
        { name: 'r1', key: region.key, offset: 0, byteSize: 1024 },
      ]);
      expect(await client.systemSharedMemoryStatus('r1')).toHaveLength(1);
      await client.unregisterSystemSharedMemory('r1');
      expect(await client.systemSharedMemoryStatus()).toEqual([]);
    } finally {
      region.destroy();
    }
  });

  it('binds inputs and outputs to regions: a 64 MiB tensor round trip', async () => {
    const bytes = 64 * 1024 * 1024;
    const count = bytes / 4;
    const input = SystemSharedMemoryRegion.create({ byteSize: bytes });
    const output = SystemSharedMemoryRegion.create({ byteSize: bytes });
    try {
      const data = new Float32Array(count);
      for (let i = 0; i < count; i += 1000) data[i] = i / 2;
      input.write(new Uint8Array(data.buffer));
      await client.registerSystemSharedMemory({ name: 'in64', key: input.key, byteSize: bytes });
      await client.registerSystemSharedMemory({ name: 'out64', key: output.key, byteSize: bytes });
      const result = await client.infer(
        'identity',
        [
          {
            name: 'INPUT0',
            datatype: 'FP32',
            shape: [count],
            sharedMemory: { region: 'in64', byteSize: bytes },
          },
        ],
        { outputs: [{ name: 'OUTPUT0', sharedMemory: { region: 'out64', byteSize: bytes } }] },
      );
      const tensor = result.output('OUTPUT0');
      expect(tensor.shape).toEqual([count]);
      expect(tensor.raw.byteLength).toBe(0);
      expect(tensor.parameters.shared_memory_region).toBe('out64');
      const back = output.read(0, bytes);
      expect(Buffer.compare(back, Buffer.from(data.buffer))).toBe(0);
    } finally {
      await client.unregisterSystemSharedMemory();
      input.destroy();
      output.destroy();
    }
  }, 60_000);

  it('mixes shared-memory and in-message inputs, with offsets', async () => {
    const region = SystemSharedMemoryRegion.create({ byteSize: 4096 });
    try {
      region.write(Buffer.from(new Float32Array(16).fill(3).buffer), 256);
      await client.registerSystemSharedMemory({ name: 'mixed', key: region.key, byteSize: 4096 });
      const result = await client.infer('add_sub', [
        {
          name: 'INPUT0',
          datatype: 'FP32',
          shape: [1, 16],
          sharedMemory: { region: 'mixed', byteSize: 64, offset: 256 },
        },
        { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(1) },
      ]);
      expect(result.output('OUTPUT0').toArray()).toEqual(new Array(16).fill(4));
      expect(result.output('OUTPUT1').toArray()).toEqual(new Array(16).fill(2));
    } finally {
      await client.unregisterSystemSharedMemory('mixed');
      region.destroy();
    }
  });

  it('an unknown region is NOT_FOUND (as Triton says); a wrong byte size is INVALID_ARGUMENT', async () => {
    const unknown = await client
      .infer('identity', [
        { name: 'INPUT0', datatype: 'FP32', shape: [4], sharedMemory: { region: 'nope', byteSize: 16 } },
      ])
      .catch((e) => e);
    expect(unknown.code).toBe('NOT_FOUND');
    await expect(
      client.infer('identity', [
        { name: 'INPUT0', datatype: 'FP32', shape: [4], sharedMemory: { region: 'r', byteSize: 15 } },
      ]),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/needs 16 bytes/) });
  });

  it('removes regions a process never destroyed when it exits', () => {
    const root = join(import.meta.dirname, '..', '..');
    const child = spawnSync(
      join(root, 'node_modules', '.bin', 'tsx'),
      ['--conditions=@infergate/source', join(root, 'test', 'unit', 'fixtures', 'shm-exit-child.ts')],
      { cwd: root, encoding: 'utf8', timeout: 15_000 },
    );
    expect(child.status, child.stderr).toBe(0);
    const path = child.stdout.trim();
    expect(path).toMatch(/^\/dev\/shm\/infergate_/);
    expect(existsSync(path)).toBe(false);
  });

  it('CUDA registration carries the raw handle; a CPU-only server refuses it', async () => {
    const error = await client
      .registerCudaSharedMemory({
        name: 'gpu0',
        rawHandle: new Uint8Array(64).fill(7),
        deviceId: 0,
        byteSize: 1024,
      })
      .catch((e) => e);
    expect(error.code).not.toBe('UNIMPLEMENTED');
    expect(error.message).toMatch(/CUDA/i);
    expect(await client.cudaSharedMemoryStatus()).toEqual([]);
    await expect(
      client.registerCudaSharedMemory({ name: 'x', rawHandle: new Uint8Array(0), deviceId: 0, byteSize: 1 }),
    ).rejects.toThrow(/rawHandle/);
  });
});

describe('enableGpuIpc: the automatic shared-memory path', () => {
  it('sends large inputs through a pooled region on a local server and reuses it', async () => {
    const auto = createTritonClient({ url: server.url, sharedMemory: { thresholdBytes: 1024 } });
    try {
      const data = Float32Array.from({ length: 4096 }, (_, i) => i);
      for (let run = 0; run < 3; run++) {
        const result = await auto.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data }]);
        expect((result.output('OUTPUT0').data as Float32Array)[4095]).toBe(4095);
      }
      expect(auto.grpc.sharedMemory?.regionCount).toBe(1);
      const regions = await auto.systemSharedMemoryStatus();
      expect(regions).toHaveLength(1);
      const path = `/dev/shm${regions[0]?.key}`;
      expect(existsSync(path)).toBe(true);
      // Small tensors stay in the message.
      await auto.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }]);
      await auto.close();
      expect(existsSync(path)).toBe(false);
      expect(server.sharedMemoryRegions()).toHaveLength(0);
    } finally {
      await auto.close();
    }
  });

  it('two clients in one process stage side by side under distinct region names', async () => {
    const first = createTritonClient({ url: server.url, sharedMemory: { thresholdBytes: 1024 } });
    const second = createTritonClient({ url: server.url, sharedMemory: { thresholdBytes: 1024 } });
    try {
      const data = new Float32Array(4096).fill(3);
      for (const client of [first, second]) {
        const result = await client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data }]);
        expect((result.output('OUTPUT0').data as Float32Array)[4095]).toBe(3);
        expect(client.grpc.sharedMemory?.stats).toMatchObject({
          sharedMemoryCalls: 1,
          plainCalls: 0,
          lastPath: 'shared-memory',
        });
      }
      const names = server.sharedMemoryRegions().map((region) => region.name);
      expect(names).toHaveLength(2);
      expect(new Set(names).size).toBe(2);
      for (const name of names)
        expect(name).toMatch(new RegExp(`^infergate_${process.pid}_[0-9a-f]{8}_\\d+$`));
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('falls back to plain gRPC when the server lacks shared memory', async () => {
    const plain = await startTestServer({ extensions: ['model_configuration'] });
    const auto = createTritonClient({ url: plain.url, sharedMemory: { thresholdBytes: 1024 } });
    try {
      const data = new Float32Array(4096).fill(2);
      const result = await auto.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data }]);
      expect((result.output('OUTPUT0').data as Float32Array)[100]).toBe(2);
      expect(auto.grpc.sharedMemory?.regionCount).toBe(0);
      expect(auto.grpc.sharedMemory?.stats).toMatchObject({
        sharedMemoryCalls: 0,
        plainCalls: 1,
        lastPath: 'grpc',
        lastFallbackReason: 'the server does not list system_shared_memory',
      });
    } finally {
      await auto.close();
      await plain.stop();
    }
  });

  it('is off when enableGpuIpc is false', () => {
    expect(client.grpc.sharedMemory).toBeUndefined();
  });
});

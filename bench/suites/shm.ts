// Suite `shm`: one round trip of an FP32 tensor through `identity`, over plain gRPC vs system shared
// memory (input and output bound to registered regions), on the same server, interleaved A B A B.
// Default server: the embedded reference server; `--url host:port` measures another (e.g. Triton).
//   pnpm bench shm [--url 127.0.0.1:8001 --model identity_fp32] [--reps 5]
import { performance } from 'node:perf_hooks';
import { createTritonClient, SystemSharedMemoryRegion } from '@infergate/core';
import { startTestServer } from '@infergate/testing';
import { type BenchCase, flag, median, packageVersion, report } from '../lib.js';

const MiB = 1024 * 1024;

export async function run(): Promise<void> {
  const url = flag('url');
  const model = flag('model') ?? 'identity';
  const reps = Number(flag('reps') ?? 5);
  const sizes = (flag('sizes') ?? '1,16,64,256').split(',').map(Number);
  const server = url === undefined ? await startTestServer() : undefined;
  const target = url ?? (server?.url as string);
  const grpcClient = createTritonClient({ url: target, enableGpuIpc: false, timeoutMs: 120_000 });
  const shmClient = createTritonClient({ url: target, enableGpuIpc: false, timeoutMs: 120_000 });
  const cases: BenchCase[] = [];
  const ratios: Record<string, number> = {};
  try {
    const serverName = (await grpcClient.serverMetadata()).name;
    for (const mib of sizes) {
      const bytes = mib * MiB;
      const count = bytes / 4;
      const data = new Float32Array(count);
      for (let i = 0; i < count; i += 1024) data[i] = i;
      const input = SystemSharedMemoryRegion.create({ byteSize: bytes });
      const output = SystemSharedMemoryRegion.create({ byteSize: bytes });
      const inName = `bench_in_${mib}`;
      const outName = `bench_out_${mib}`;
      await shmClient.registerSystemSharedMemory({ name: inName, key: input.key, byteSize: bytes });
      await shmClient.registerSystemSharedMemory({ name: outName, key: output.key, byteSize: bytes });
      const target = Buffer.allocUnsafe(bytes);

      const viaGrpc = async () => {
        const result = await grpcClient.infer(model, [
          { name: 'INPUT0', datatype: 'FP32', shape: [count], data },
        ]);
        const out = result.output('OUTPUT0').data as Float32Array;
        if (out[count - 1024] !== data[count - 1024]) throw new Error('gRPC arm returned wrong data');
      };
      const viaShm = async () => {
        input.write(new Uint8Array(data.buffer));
        await shmClient.infer(
          model,
          [
            {
              name: 'INPUT0',
              datatype: 'FP32',
              shape: [count],
              sharedMemory: { region: inName, byteSize: bytes },
            },
          ],
          { outputs: [{ name: 'OUTPUT0', sharedMemory: { region: outName, byteSize: bytes } }] },
        );
        output.read(0, bytes, target);
        if (target.readFloatLE((count - 1024) * 4) !== data[count - 1024])
          throw new Error('shm arm returned wrong data');
      };

      await viaGrpc(); // warm up both paths
      await viaShm();
      const grpcTimes: number[] = [];
      const shmTimes: number[] = [];
      for (let rep = 0; rep < reps; rep++) {
        for (const [arm, times] of [
          [viaGrpc, grpcTimes],
          [viaShm, shmTimes],
        ] as const) {
          const started = performance.now();
          await arm();
          times.push(performance.now() - started);
        }
      }
      await shmClient.unregisterSystemSharedMemory(inName);
      await shmClient.unregisterSystemSharedMemory(outName);
      input.destroy();
      output.destroy();
      const grpcMs = median(grpcTimes);
      const shmMs = median(shmTimes);
      cases.push({
        name: `grpc ${mib}MiB`,
        arm: 'grpc',
        load: `${mib}MiB`,
        p50Ms: grpcMs,
        extra: { times: grpcTimes },
      });
      cases.push({
        name: `shm ${mib}MiB`,
        arm: 'shm',
        load: `${mib}MiB`,
        p50Ms: shmMs,
        extra: { times: shmTimes },
      });
      ratios[`shm_vs_grpc_${mib}MiB`] = grpcMs / shmMs;
    }
    report({
      suite: 'shm',
      versions: { '@infergate/core': packageVersion('core'), server: serverName },
      cases,
      ratios,
      targets: { shm_vs_grpc_64MiB: '>= 3' },
      command: `pnpm bench shm${url ? ` --url ${url} --model ${model}` : ''}`,
    });
  } finally {
    await grpcClient.close();
    await shmClient.close();
    await server?.stop();
  }
}

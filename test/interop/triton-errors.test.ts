// Errors that tell the truth, against the interop run's one real Triton 2.51 (PyTriton 0.7.0, CPU):
// shape errors keep a useful text, stream errors get the unary codes, messages over the size limit
// are not retryable, an HTTP port is named as such, and two clients stage shared memory side by side.
import { createTritonClient } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { sharedTritonClients } from './shared-triton.js';
import { caught, collect, repeatInputs } from './triton-helpers.js';

const { triton, client } = sharedTritonClients();

const MiB = 1024 * 1024;

describe('shape errors (Triton ends their text in a space, which node:http2 drops)', () => {
  for (const shape of [[], [2, 2]]) {
    const data = Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => 1);
    it(`unary, default engine: a [${shape}] input to a [-1] model keeps Triton's own text`, async () => {
      // The http2 engine's own HTTP/2 layer keeps a grpc-message that ends in a space.
      const error = await caught(
        client.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', shape, data }]),
      );
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.retryable).toBe(false);
      expect(error.rawMessage).toContain("unexpected shape for input 'INPUT0' for model 'identity_fp32'");
      expect(error.rawMessage).toContain(`got [${shape.join(',')}]`);
    });

    it(`unary, grpc-js engine: a [${shape}] input to a [-1] model names the input, the shape sent and the shape declared`, async () => {
      const grpcJs = createTritonClient({ url: triton.grpcAddress, engine: 'grpc-js', enableGpuIpc: false });
      try {
        const error = await caught(
          grpcJs.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', shape, data }]),
        );
        expect(error.code).toBe('INVALID_ARGUMENT');
        expect(error.retryable).toBe(false);
        expect(error.rawMessage).toContain("unexpected shape for input 'INPUT0' for model 'identity_fp32'");
        expect(error.rawMessage).toContain(`sent [${shape.join(',')}]`);
        expect(error.rawMessage).toContain("the model's metadata says [-1]");
        expect(error.details).toMatchObject({ input: 'INPUT0', sentShape: shape, modelShape: [-1] });
      } finally {
        await grpcJs.close();
      }
    });
  }

  it("stream: Triton's own text arrives whole", async () => {
    const error = await caught(
      collect(
        client.inferStream('identity_fp32', [
          { name: 'INPUT0', datatype: 'FP32', shape: [2, 2], data: [1, 2, 3, 4] },
        ]),
        'OUTPUT0',
      ),
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.rawMessage).toContain(
      "unexpected shape for input 'INPUT0' for model 'identity_fp32'. Expected [-1], got [2,2].",
    );
  });
});

describe('stream errors get the code the same mistake gets over unary', () => {
  it('a wrong datatype on a decoupled model is INVALID_ARGUMENT, as over unary', async () => {
    const unary = await caught(
      client.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'INT32', data: [1] }]),
    );
    expect(unary.code).toBe('INVALID_ARGUMENT');
    expect(unary.rawMessage).toContain("but model 'identity_fp32' expects 'FP32'");
    const streamed = await caught(
      collect(client.inferStream('repeat', [{ name: 'IN', datatype: 'FP32', data: [1] }])),
    );
    expect(streamed.rawMessage).toContain("but model 'repeat' expects 'INT32'");
    expect(streamed.code).toBe('INVALID_ARGUMENT');
    expect(streamed.retryable).toBe(false);
  });

  it('a batch over max_batch_size is INVALID_ARGUMENT on both', async () => {
    const inputs = [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [9, 1], data: new Float32Array(9) }];
    const unary = await caught(client.infer('identity_fp32_batched', inputs));
    const streamed = await caught(collect(client.inferStream('identity_fp32_batched', inputs), 'OUTPUT0'));
    expect(unary.code).toBe('INVALID_ARGUMENT');
    expect(streamed.code).toBe('INVALID_ARGUMENT');
    expect(streamed.rawMessage).toContain('batch-size must be <= 8');
  });

  it('the decoupled model still streams when the request is right', async () => {
    expect(await collect(client.inferStream('repeat', repeatInputs(2)))).toHaveLength(2);
  });
});

describe('messages over maxMessageBytes', () => {
  it('a 16 MiB request with maxMessageBytes at 4 MiB: INVALID_ARGUMENT, not retryable, naming the option', async () => {
    const small = createTritonClient({
      url: triton.grpcAddress,
      maxMessageBytes: 4 * MiB,
      enableGpuIpc: false,
    });
    try {
      const data = new Float32Array(4 * MiB);
      const error = await caught(small.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data }]));
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.retryable).toBe(false);
      expect(error.rawMessage).toContain('maxMessageBytes');
      // The limit is ours, not the server's: a request under it goes through.
      const ok = await small.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }]);
      expect(ok.output('OUTPUT0').toArray()).toEqual([1]);
    } finally {
      await small.close();
    }
  });

  it('a response over the limit (an 8 MiB input staged in shared memory, echoed back) is not retryable either', async () => {
    const small = createTritonClient({
      url: triton.grpcAddress,
      maxMessageBytes: 4 * MiB,
      enableGpuIpc: true,
    });
    try {
      const data = new Float32Array(2 * MiB);
      const error = await caught(small.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data }]));
      expect(small.grpc.sharedMemory?.stats.lastPath).toBe('shared-memory');
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.retryable).toBe(false);
      expect(error.rawMessage).toContain('Received message larger than max');
      expect(error.rawMessage).toContain('maxMessageBytes');
    } finally {
      await small.close();
    }
  });
});

describe("Triton's HTTP port given as the gRPC url", () => {
  it('fails at once, not retryable, saying it looks like an HTTP port', async () => {
    for (const url of [triton.httpAddress, `http://${triton.httpAddress}`]) {
      const wrong = createTritonClient({ url, timeoutMs: 20_000 });
      try {
        const error = await caught(wrong.serverLive());
        expect(error.code).toBe('FAILED_PRECONDITION');
        expect(error.retryable).toBe(false);
        expect(error.rawMessage).toContain(
          "this looks like an HTTP port; Triton's gRPC port is usually 8001",
        );
      } finally {
        await wrong.close();
      }
    }
  });
});

describe('enableGpuIpc with two clients in one process', () => {
  it('both stage their large inputs in their own registered regions', async () => {
    // This process's regions registered before the two clients (another test's client may still
    // hold one): only the regions that appear with the two clients are theirs.
    const ours = async () =>
      (await client.systemSharedMemoryStatus())
        .map((region) => region.name)
        .filter((name) => name.startsWith(`infergate_${process.pid}_`));
    const before = new Set(await ours());
    const names = new Set<string>();
    const first = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: true });
    const second = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: true });
    try {
      const data = Float32Array.from({ length: 4 * MiB }, (_, i) => i % 1000); // 16 MiB
      for (const ipc of [first, second]) {
        const output = (
          await ipc.infer('identity_fp32', [{ name: 'INPUT0', datatype: 'FP32', data }])
        ).output('OUTPUT0');
        expect(Buffer.compare(Buffer.from(output.raw), Buffer.from(data.buffer))).toBe(0);
        expect(ipc.grpc.sharedMemory?.stats).toMatchObject({
          sharedMemoryCalls: 1,
          plainCalls: 0,
          lastPath: 'shared-memory',
        });
      }
      for (const name of await ours()) if (!before.has(name)) names.add(name);
      expect(names.size).toBe(2);
    } finally {
      await first.close();
      await second.close();
    }
    // Closing them unregistered both.
    expect((await ours()).filter((name) => names.has(name))).toEqual([]);
  });
});

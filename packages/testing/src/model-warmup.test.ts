import type { MessageInitShape } from '@bufbuild/protobuf';
import { createTritonClient, ErrorCode, InfergateError } from '@infergate/core';
import type { ModelWarmup_InputSchema, ModelWarmupSchema } from '@infergate/core/proto';
import { describe, expect, it } from 'vitest';
import { ConfigDataType } from './internal/proto.js';
import type { ExecuteRequest, ModelDefinition } from './model-definition.js';
import { startTestServer, TestServer } from './test-server.js';

type Sample = MessageInitShape<typeof ModelWarmupSchema>;

type Inputs = Record<string, MessageInitShape<typeof ModelWarmup_InputSchema>>;

/** A sample (by default: zero data, FP32 [4] for INPUT0, batch size 1, count unset). */
function sample(fields: { name?: string; batchSize?: number; count?: number; inputs?: Inputs } = {}): Sample {
  return {
    name: fields.name ?? 'zeros',
    batchSize: fields.batchSize ?? 1,
    ...(fields.count === undefined ? {} : { count: fields.count }),
    inputs: fields.inputs ?? {
      INPUT0: {
        dataType: ConfigDataType.TYPE_FP32,
        dims: [4n],
        inputDataType: { case: 'zeroData', value: true },
      },
    },
  };
}

/** A model that echoes INPUT0 and keeps every request its `execute` received. */
function recording(name: string, samples: Sample[], maxBatchSize = 8) {
  const seen: ExecuteRequest[] = [];
  const model: ModelDefinition = {
    name,
    maxBatchSize,
    inputs: [{ name: 'INPUT0', datatype: 'FP32', dims: [4] }],
    outputs: [{ name: 'OUTPUT0', datatype: 'FP32', dims: [4] }],
    config: { modelWarmup: samples },
    execute(request) {
      seen.push(request);
      return [
        {
          name: 'OUTPUT0',
          datatype: 'FP32',
          shape: [...request.input('INPUT0').shape],
          data: request.input('INPUT0').data,
        },
      ];
    },
  };
  return { model, seen };
}

async function failure(promise: Promise<unknown>): Promise<InfergateError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof InfergateError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('model warm-up (model_warmup)', () => {
  it('runs each sample count times before the server listens, in its statistics but not as requests', async () => {
    const { model, seen } = recording('warmed', [sample({ batchSize: 2, count: 3 })]);
    const server = await startTestServer({ builtins: false, models: [model] });
    try {
      expect(seen).toHaveLength(3);
      for (const request of seen) {
        expect(request.batchSize).toBe(2);
        expect(request.input('INPUT0').shape).toEqual([2, 4]);
        expect([...(request.input('INPUT0').data as Float32Array)]).toEqual(new Array(8).fill(0));
      }
      const statistics = server.modelStatistics('warmed');
      expect(statistics.executionCount).toBe(3);
      expect(statistics.inferenceCount).toBe(6);
      expect(server.stats('warmed')).toMatchObject({ requests: 0, executions: 3, rows: 6, inFlight: 0 });
      // The first real request is served as any other, and counted on top.
      const client = createTritonClient({ url: server.url });
      try {
        const input = new Float32Array([1, 2, 3, 4]);
        const result = await client.infer('warmed', [
          { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: input },
        ]);
        expect([...(result.output('OUTPUT0').data as Float32Array)]).toEqual([1, 2, 3, 4]);
      } finally {
        await client.close();
      }
      expect(server.stats('warmed')).toMatchObject({ requests: 1, executions: 4 });
    } finally {
      await server.stop();
    }
  });

  it('runs a sample once when its count is 0, and every sample in order', async () => {
    const random: Sample = sample({
      name: 'random',
      inputs: {
        INPUT0: {
          dataType: ConfigDataType.TYPE_FP32,
          dims: [4n],
          inputDataType: { case: 'randomData', value: true },
        },
      },
    });
    const { model, seen } = recording('once', [sample({ batchSize: 3 }), random]);
    const server = await startTestServer({ builtins: false, models: [model] });
    try {
      expect(seen.map((request) => request.batchSize)).toEqual([3, 1]);
      expect(server.modelStatistics('once').executionCount).toBe(2);
    } finally {
      await server.stop();
    }
  });

  it('serves a model added at run time only once its warm-up has run', async () => {
    const server = await startTestServer({ builtins: false });
    try {
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const { model, seen } = recording('late', [sample()]);
      const execute = model.execute as NonNullable<ModelDefinition['execute']>;
      const added = server.addModel({
        ...model,
        async execute(request, context) {
          await gate;
          return execute(request, context);
        },
      });
      await expect.poll(() => server.stats('late').inFlight).toBe(1);
      expect(server.models()).not.toContain('late');
      release();
      await added;
      expect(server.models()).toContain('late');
      expect(seen).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });

  it('gives a model without warm-up samples at once', async () => {
    const server = await startTestServer({ builtins: false });
    try {
      const { model, seen } = recording('plain', []);
      const added = server.addModel(model);
      expect(server.models()).toContain('plain');
      await added;
      expect(seen).toHaveLength(0);
      expect(server.modelStatistics('plain').executionCount).toBe(0);
    } finally {
      await server.stop();
    }
  });

  it('refuses a sample it cannot build with a typed error, and does not serve the model', async () => {
    const server = await startTestServer({ builtins: false });
    try {
      const cases: [Sample, number, RegExp][] = [
        [sample({ batchSize: 2 }), 0, /batch_size 2, but the model does not batch/],
        [sample({ batchSize: 9 }), 8, /above the model's max_batch_size 8/],
        [sample({ batchSize: 0 }), 8, /batch_size of at least 1/],
        [
          sample({
            inputs: {
              INPUT0: {
                dataType: ConfigDataType.TYPE_FP32,
                dims: [4n],
                inputDataType: { case: 'inputDataFile', value: 'raw' },
              },
            },
          }),
          8,
          /no model folder/,
        ],
        [
          sample({
            inputs: {
              INPUT0: {
                dataType: ConfigDataType.TYPE_FP32,
                dims: [-1n],
                inputDataType: { case: 'zeroData', value: true },
              },
            },
          }),
          8,
          /variable-size dimensions/,
        ],
        [
          sample({ inputs: { INPUT0: { dims: [4n], inputDataType: { case: 'zeroData', value: true } } } }),
          8,
          /no data_type/,
        ],
      ];
      for (const [bad, maxBatchSize, message] of cases) {
        const { model, seen } = recording('bad', [bad], maxBatchSize);
        const error = await failure(server.addModel(model));
        expect(error.code).toBe(ErrorCode.InvalidArgument);
        expect(error.model).toBe('bad');
        expect(error.message).toMatch(message);
        expect(seen).toHaveLength(0);
        expect(server.models()).not.toContain('bad');
      }
    } finally {
      await server.stop();
    }
  });

  it('fails to start when a warm-up run fails, naming the sample', async () => {
    const model: ModelDefinition = {
      ...recording('broken', [sample({ name: 'first' })]).model,
      execute() {
        throw new Error('out of memory');
      },
    };
    let server: TestServer | undefined;
    try {
      const error = await failure(
        startTestServer({ builtins: false, models: [model] }).then((started) => {
          server = started;
        }),
      );
      expect(error.code).toBe(ErrorCode.InvalidArgument);
      expect(error.message).toMatch(/failed to run warmup sample 'first': out of memory/);
    } finally {
      await server?.stop();
    }
  });

  it('aborts a warm-up run that never finishes after warmupTimeoutMs, with DEADLINE_EXCEEDED', async () => {
    let signal: AbortSignal | undefined;
    const model: ModelDefinition = {
      ...recording('stuck', [sample({ name: 'forever' })]).model,
      execute(_request, context) {
        signal = context.signal;
        return new Promise(() => {});
      },
    };
    let server: TestServer | undefined;
    try {
      const error = await failure(
        startTestServer({ builtins: false, models: [model], warmupTimeoutMs: 50 }).then((started) => {
          server = started;
        }),
      );
      expect(error.code).toBe(ErrorCode.DeadlineExceeded);
      expect(error.message).toMatch(/warmup sample 'forever' \(run 1 of 1\) did not finish within 50 ms/);
      expect(signal?.aborted).toBe(true);
      expect(signal?.reason).toBe(error);
    } finally {
      await server?.stop();
    }
    const stuck = new TestServer({ builtins: false, warmupTimeoutMs: 50 });
    try {
      await stuck.listen();
      const late = await failure(stuck.addModel(model));
      expect(late.code).toBe(ErrorCode.DeadlineExceeded);
      expect(stuck.models()).not.toContain('stuck');
    } finally {
      await stuck.stop();
    }
    expect(() => new TestServer({ warmupTimeoutMs: 0 })).toThrow(/warmupTimeoutMs must be a positive number/);
  });

  it('reports its samples in the model configuration', async () => {
    const { model } = recording('configured', [sample({ count: 2 })]);
    const server = await startTestServer({ builtins: false, models: [model] });
    const client = createTritonClient({ url: server.url });
    try {
      const config = await client.modelConfig('configured');
      expect(config.modelWarmup).toHaveLength(1);
      expect(config.modelWarmup[0]?.count).toBe(2);
    } finally {
      await client.close();
      await server.stop();
    }
  });
});

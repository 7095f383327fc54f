import { ErrorCode, InfergateError } from '@infergate/core';
import { DataType, ModelInstanceGroup_Kind, ModelQueuePolicy_TimeoutAction } from '@infergate/core/proto';
import { describe, expect, it } from 'vitest';
import { thrownInfergateError } from '../../../test/unit/thrown-error.js';
import type { ModelConfigInit } from './message-init.js';
import { buildModelConfig } from './model-config-builder.js';
import { parseModelConfig, printModelConfig } from './model-config-text.js';

const failure = (run: () => unknown): string => thrownInfergateError(run, ErrorCode.InvalidArgument).message;

describe('buildModelConfig', () => {
  it('covers batching, priorities, queue policies, instances, rate limiter, cache, decoupled, tensors', () => {
    const config = buildModelConfig({
      name: 'classifier',
      backend: 'python',
      maxBatchSize: 64,
      input: [{ name: 'IMAGE', dataType: 'FP32', dims: [3, 224, 224], reshape: { shape: [1, 3, 224, 224] } }],
      output: [{ name: 'SCORES', dataType: 'TYPE_FP32', dims: [1000] }],
      dynamicBatching: {
        preferredBatchSize: [16, 32],
        maxQueueDelayMicroseconds: 2000,
        preserveOrdering: true,
        priorityLevels: 2,
        defaultPriorityLevel: 2,
        defaultQueuePolicy: {
          maxQueueSize: 256,
          defaultTimeoutMicroseconds: 100_000,
          timeoutAction: 'REJECT',
        },
        priorityQueuePolicy: {
          1: { maxQueueSize: 64, defaultTimeoutMicroseconds: 20_000, timeoutAction: 'DELAY' },
        },
      },
      instanceGroup: [
        {
          kind: 'KIND_GPU',
          count: 2,
          gpus: [0],
          rateLimiter: { resources: [{ name: 'GPU_MEM', count: 4 }], priority: 2 },
        },
      ],
      modelTransactionPolicy: { decoupled: true },
      responseCache: { enable: true },
      parameters: { tenant_mode: { stringValue: 'shared' } },
    });
    expect(config.maxBatchSize).toBe(64);
    expect(config.input[0]?.dataType).toBe(DataType.TYPE_FP32);
    expect(config.input[0]?.reshape?.shape).toEqual([1n, 3n, 224n, 224n]);
    expect(config.schedulingChoice.case).toBe('dynamicBatching');
    const batching =
      config.schedulingChoice.case === 'dynamicBatching' ? config.schedulingChoice.value : undefined;
    expect(batching?.maxQueueDelayMicroseconds).toBe(2000n);
    expect(batching?.priorityLevels).toBe(2n);
    expect(batching?.defaultQueuePolicy?.maxQueueSize).toBe(256);
    expect(batching?.priorityQueuePolicy[1]?.timeoutAction).toBe(ModelQueuePolicy_TimeoutAction.DELAY);
    expect(config.instanceGroup[0]?.kind).toBe(ModelInstanceGroup_Kind.GPU);
    expect(config.instanceGroup[0]?.rateLimiter?.resources[0]).toMatchObject({ name: 'GPU_MEM', count: 4 });
    expect(config.modelTransactionPolicy?.decoupled).toBe(true);
    expect(config.responseCache?.enable).toBe(true);
    expect(parseModelConfig(printModelConfig(config))).toEqual(config);
  });

  it('builds sequence batching and ensembles; snake_case names work too', () => {
    const snake: ModelConfigInit = JSON.parse(
      '{ "name": "s", "max_batch_size": 4, "dynamic_batching": { "max_queue_delay_microseconds": 100 } }',
    );
    expect(buildModelConfig(snake).maxBatchSize).toBe(4);
    const sequence = buildModelConfig({
      name: 'stateful',
      maxBatchSize: 4,
      sequenceBatching: {
        maxSequenceIdleMicroseconds: 5_000_000,
        controlInput: [
          { name: 'START', control: [{ kind: 'CONTROL_SEQUENCE_START', int32FalseTrue: [0, 1] }] },
        ],
        oldest: { maxCandidateSequences: 4 },
      },
    });
    expect(sequence.schedulingChoice.case).toBe('sequenceBatching');
    const ensemble = buildModelConfig({
      name: 'pipeline',
      platform: 'ensemble',
      input: [{ name: 'RAW', dataType: 'UINT8', dims: [-1] }],
      output: [{ name: 'LABEL', dataType: 'STRING', dims: [1] }],
      ensembleScheduling: {
        step: [
          {
            modelName: 'preprocess',
            modelVersion: -1,
            inputMap: { IN: 'RAW' },
            outputMap: { OUT: 'pixels' },
          },
          {
            modelName: 'classify',
            modelVersion: -1,
            inputMap: { IMAGE: 'pixels' },
            outputMap: { LABEL: 'LABEL' },
          },
        ],
      },
    });
    expect(ensemble.schedulingChoice.case).toBe('ensembleScheduling');
  });

  it('names every unknown field, with a suggestion, and every wrong kind, with its path', () => {
    const message = failure(() =>
      // Plain JavaScript or a JSON file: what the types would have caught, the builder reports.
      buildModelConfig(
        JSON.parse(`{
          "name": "m",
          "maxBatchSise": 8,
          "input": [{ "name": "x", "dataType": "FP32", "dims": ["3"] }],
          "output": [{ "name": "y", "dataType": "FP33", "dims": [1] }]
        }`),
      ),
    );
    expect(message).toContain(
      "model config.maxBatchSise: inference.ModelConfig has no field 'maxBatchSise'; did you mean 'maxBatchSize'?",
    );
    expect(message).toContain('model config.input[0].dims[0]: expected an integer, got "3"');
    expect(message).toContain(
      'model config.output[0].dataType: "FP33" is not a value of inference.DataType; one of TYPE_INVALID, TYPE_BOOL',
    );
  });

  it('types refuse misspelt fields, unknown enum names and strings for numbers; so does the runtime', () => {
    // @ts-expect-error a misspelt field
    const misspelt: ModelConfigInit = { maxBatchSise: 1 };
    // @ts-expect-error an unknown enum name
    const enumName: ModelConfigInit = { input: [{ name: 'x', dataType: 'FP33' }] };
    // @ts-expect-error a string where a number goes
    const text: ModelConfigInit = { maxBatchSize: '8' };
    for (const init of [misspelt, enumName, text]) {
      expect(() => buildModelConfig({ name: 'm', ...init })).toThrow(InfergateError);
    }
  });

  it('refuses two members of one oneof and numbers out of range', () => {
    const message = failure(() =>
      buildModelConfig({ name: 'm', maxBatchSize: 2 ** 31, dynamicBatching: {}, sequenceBatching: {} }),
    );
    expect(message).toContain(
      'model config.maxBatchSize: 2147483648 is out of range [-2147483648, 2147483647]',
    );
    expect(message).toContain(
      "model config.sequenceBatching: 'dynamicBatching' and 'sequenceBatching' are alternatives (scheduling_choice); set only one",
    );
  });

  it("applies Triton's load-time rules: priorities in range, reshape size, unique names, ensemble data flow", () => {
    const message = failure(() =>
      buildModelConfig({
        name: 'm',
        maxBatchSize: 8,
        input: [
          { name: 'x', dataType: 'FP32', dims: [4], reshape: { shape: [2, 3] } },
          { name: 'x', dims: [0] },
        ],
        dynamicBatching: {
          priorityLevels: 2,
          defaultPriorityLevel: 3,
          priorityQueuePolicy: { 5: { maxQueueSize: 1 } },
        },
        instanceGroup: [{ kind: 'KIND_CPU', gpus: [0] }],
      }),
    );
    expect(message).toContain("model config 'm' is invalid");
    expect(message).toContain("input[0] 'x'.reshape: [2, 3] holds 6 elements but dims [4] hold 4");
    expect(message).toContain("input[1] 'x'.data_type: set a data type");
    expect(message).toContain("input[1] 'x'.dims[0]: 0 must be positive or -1");
    expect(message).toContain("input: 'x' is declared twice");
    expect(message).toContain('default_priority_level: 3 must be between 1 and priority_levels (2)');
    expect(message).toContain('priority_queue_policy: level 5 must be between 1 and priority_levels (2)');
    expect(message).toContain('instance_group[0].gpus: a KIND_CPU group runs on no GPU');

    const ensemble = failure(() =>
      buildModelConfig({
        name: 'e',
        platform: 'ensemble',
        output: [{ name: 'OUT', dataType: 'FP32', dims: [1] }],
        ensembleScheduling: {
          step: [{ modelName: 'a', inputMap: { IN: 'missing' }, outputMap: { Y: 'other' } }],
        },
      }),
    );
    expect(ensemble).toContain(
      "'IN' reads 'missing', which is neither an ensemble input nor any step's output",
    );
    expect(ensemble).toContain("output 'OUT': no ensemble step writes it");
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { equals } from '@bufbuild/protobuf';
import { InfergateError } from '@infergate/core';
import { DataType, ModelConfigSchema, ModelQueuePolicy_TimeoutAction } from '@infergate/core/proto';
import { describe, expect, it } from 'vitest';
import { modelConfigToJson, parseModelConfig, printModelConfig } from './model-config-text.js';

const examples = join(import.meta.dirname, '..', 'test-fixtures', 'triton-examples');
const example = (name: string) => parseModelConfig(readFileSync(join(examples, name), 'utf8'), name);

describe('config.pbtxt', () => {
  const files = readdirSync(examples).filter((name) => name.endsWith('.pbtxt'));

  it.each(files)('parses %s and prints it back to the same config', (name) => {
    const config = example(name);
    expect(config.name).not.toBe('');
    const printed = printModelConfig(config);
    expect(equals(ModelConfigSchema, parseModelConfig(printed), config)).toBe(true);
  });

  it('reads Triton layouts: list blocks, reshape, repeated list blocks, True, commas in maps', () => {
    const densenet = example('densenet_onnx.pbtxt');
    expect(densenet.input[0]?.dims).toEqual([3n, 224n, 224n]);
    expect(densenet.output[0]?.reshape?.shape).toEqual([1n, 1000n, 1n, 1n]);
    const addSub = example('python_add_sub.pbtxt');
    expect(addSub.input.map((input) => input.name)).toEqual(['INPUT0', 'INPUT1']);
    expect(addSub.parameters.EXECUTION_ENV_PATH?.stringValue).toBe(
      '$$TRITON_MODEL_DIRECTORY/python3.11.tar.gz',
    );
    expect(example('repeat_int32_decoupled.pbtxt').modelTransactionPolicy?.decoupled).toBe(true);
  });

  it('reads dynamic batching with priorities, rate limiter, warmup and ensembles', () => {
    const resnet = example('resnet50_trt_priority.pbtxt');
    expect(resnet.schedulingChoice.case).toBe('dynamicBatching');
    const batching =
      resnet.schedulingChoice.case === 'dynamicBatching' ? resnet.schedulingChoice.value : undefined;
    expect(batching?.priorityLevels).toBe(2n);
    expect(batching?.priorityQueuePolicy[2]?.maxQueueSize).toBe(128);
    expect(batching?.priorityQueuePolicy[1]?.timeoutAction).toBe(ModelQueuePolicy_TimeoutAction.DELAY);
    expect(resnet.instanceGroup[0]?.rateLimiter?.resources.map((r) => [r.name, r.global, r.count])).toEqual([
      ['R1', false, 4],
      ['R2', true, 2],
    ]);
    expect(resnet.modelWarmup[0]?.inputs.input?.inputDataType.case).toBe('zeroData');
    expect(resnet.responseCache?.enable).toBe(true);
    const ensemble = example('ensemble_image_classification.pbtxt');
    const steps =
      ensemble.schedulingChoice.case === 'ensembleScheduling' ? ensemble.schedulingChoice.value.step : [];
    expect(steps.map((step) => step.outputMap)).toEqual([
      { OUTPUT: 'preprocessed_image' },
      { 'InceptionV3/Predictions/Softmax': 'OUTPUT' },
    ]);
    expect(example('simple.pbtxt').input[1]?.dataType).toBe(DataType.TYPE_INT32);
  });

  it('prints in Triton layout', () => {
    expect(printModelConfig(example('densenet_onnx.pbtxt'))).toBe(
      [
        'name: "densenet_onnx"',
        'platform: "onnxruntime_onnx"',
        'input [',
        '  {',
        '    name: "data_0"',
        '    data_type: TYPE_FP32',
        '    format: FORMAT_NCHW',
        '    dims: [ 3, 224, 224 ]',
        '    reshape {',
        '      shape: [ 1, 3, 224, 224 ]',
        '    }',
        '  }',
        ']',
        'output [',
        '  {',
        '    name: "fc6_1"',
        '    data_type: TYPE_FP32',
        '    dims: [ 1000 ]',
        '    reshape {',
        '      shape: [ 1, 1000, 1, 1 ]',
        '    }',
        '    label_filename: "densenet_labels.txt"',
        '  }',
        ']',
        '',
      ].join('\n'),
    );
  });

  it('refuses bad text with INVALID_ARGUMENT naming the file and line', () => {
    const bad = 'name: "m"\ninput [ { name: "x" data_typ: TYPE_FP32 } ]\n';
    expect(() => parseModelConfig(bad, 'm/config.pbtxt')).toThrow(InfergateError);
    expect(() => parseModelConfig(bad, 'm/config.pbtxt')).toThrow(
      'm/config.pbtxt:2:21: inference.ModelInput has no field "data_typ"',
    );
    expect(() => parseModelConfig('max_batch_size: "8"')).toThrow(/INVALID_ARGUMENT/);
    expect(() => parseModelConfig('input [ { data_type: TYPE_FP99 } ]')).toThrow(
      'config.pbtxt:1:22: "TYPE_FP99" is not a value of inference.DataType',
    );
    expect(() => parseModelConfig('max_batch_size: 4294967296')).toThrow(
      'out of range [-2147483648, 2147483647]',
    );
    expect(() => parseModelConfig('name: "a" name: "b"')).toThrow('1:11: field "name" is given twice');
    expect(() => parseModelConfig('dynamic_batching {} sequence_batching {}')).toThrow(
      '"dynamic_batching" and "sequence_batching" are both set; oneof "scheduling_choice" takes one',
    );
    expect(() => parseModelConfig('name: "unclosed\nmax_batch_size: 1')).toThrow(
      '1:7: a string is not closed on its line',
    );
    expect(() => parseModelConfig('input [ { name: "x" }')).toThrow(
      'expected "," between list items, got the end of the text',
    );
  });

  it('gives the JSON Triton takes as a load override, with snake_case names', () => {
    const json = modelConfigToJson(example('resnet50_trt_priority.pbtxt'));
    expect(json.max_batch_size).toBe(32);
    expect(json.dynamic_batching).toMatchObject({ priority_levels: '2', preferred_batch_size: [8, 16] });
  });
});

import { ErrorCode } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { thrownInfergateError } from '../../../test/unit/thrown-error.js';
import { createPipeline } from './pipeline.js';
import type { PortType } from './port-type.js';
import { functionStep, type Step } from './step.js';

const tensor = (datatype: 'FP32' | 'INT32', shape?: number[]): PortType => ({
  kind: 'tensor',
  datatype,
  shape,
});
const passthrough = (inputs: Record<string, PortType>, outputs: Record<string, PortType>): Step =>
  functionStep({ inputs, outputs, run: async (values) => ({ outputs: values }) });

const refusal = (build: () => unknown): string =>
  thrownInfergateError(build, ErrorCode.InvalidArgument).message;

describe('createPipeline refuses bad graphs when it is built', () => {
  it('orders a valid DAG dependencies first', () => {
    const pipeline = createPipeline({
      name: 'ok',
      inputs: { x: tensor('FP32', [-1, 4]) },
      steps: {
        last: {
          step: passthrough({ a: tensor('FP32'), b: tensor('FP32') }, {}),
          inputs: { a: 'left.y', b: 'right.y' },
        },
        left: {
          step: passthrough({ y: tensor('FP32', [2, 4]) }, { y: tensor('FP32', [2, 4]) }),
          inputs: { y: 'input.x' },
        },
        right: { step: passthrough({ y: tensor('FP32') }, { y: tensor('FP32') }), inputs: { y: 'left.y' } },
      },
      outputs: { y: 'right.y' },
    });
    expect(pipeline.order).toEqual(['left', 'right', 'last']);
  });

  it('refuses cycles, naming the path', () => {
    const message = refusal(() =>
      createPipeline({
        name: 'loop',
        steps: {
          a: { step: passthrough({ v: { kind: 'json' } }, { v: { kind: 'json' } }), inputs: { v: 'c.v' } },
          b: { step: passthrough({ v: { kind: 'json' } }, { v: { kind: 'json' } }), inputs: { v: 'a.v' } },
          c: { step: passthrough({ v: { kind: 'json' } }, { v: { kind: 'json' } }), inputs: { v: 'b.v' } },
        },
        outputs: { v: 'c.v' },
      }),
    );
    expect(message).toContain("cycle: 'a' → 'c' → 'b' → 'a'");
  });

  it('refuses unknown steps, inputs and outputs, and unbound or unexpected inputs', () => {
    const message = refusal(() =>
      createPipeline({
        name: 'unknowns',
        inputs: { text: { kind: 'text' } },
        steps: {
          first: {
            step: passthrough(
              { a: { kind: 'text' }, b: { kind: 'text' }, c: { kind: 'text' } },
              { out: { kind: 'text' } },
            ),
            inputs: { a: 'input.txt', b: 'nowhere.out', extra: 'input.text' },
          },
          second: { step: passthrough({ a: { kind: 'text' } }, {}), inputs: { a: 'first.result' } },
        },
        outputs: { result: 'first.missing', bad: 'first' },
      }),
    );
    expect(message).toContain(
      "step 'first': binds 'extra', which the step does not take (it takes: a, b, c)",
    );
    expect(message).toContain("step 'first' input 'a': the pipeline has no input 'txt' (it has: text)");
    expect(message).toContain("step 'first' input 'b': 'nowhere' is neither a step nor 'input'");
    expect(message).toContain("step 'first' input 'c': not bound");
    expect(message).toContain("step 'second' input 'a': step 'first' has no output 'result' (it has: out)");
    expect(message).toContain("output 'result': step 'first' has no output 'missing'");
    expect(message).toContain("output 'bad': 'first' is not a reference");
  });

  it('refuses type and shape mismatches where both sides are known, unless the value is mapped', () => {
    const message = refusal(() =>
      createPipeline({
        name: 'types',
        inputs: { image: tensor('FP32', [-1, 3, 224, 224]), label: { kind: 'text' } },
        steps: {
          wrongType: { step: passthrough({ x: tensor('INT32') }, {}), inputs: { x: 'input.image' } },
          wrongRank: {
            step: passthrough({ x: tensor('FP32', [-1, 150528]) }, {}),
            inputs: { x: 'input.image' },
          },
          wrongDim: {
            step: passthrough({ x: tensor('FP32', [-1, 1, 224, 224]) }, {}),
            inputs: { x: 'input.image' },
          },
          textForTensor: { step: passthrough({ x: tensor('FP32') }, {}), inputs: { x: 'input.label' } },
          fieldOfTensor: {
            step: passthrough({ x: { kind: 'json' } }, {}),
            inputs: { x: 'input.image.shape' },
          },
          mapped: {
            step: passthrough({ x: tensor('FP32', [-1, 150528]) }, {}),
            inputs: { x: { from: 'input.image', map: (value) => value, type: tensor('FP32', [1, 150528]) } },
          },
        },
        outputs: {},
      }),
    );
    expect(message).toContain("step 'wrongType' input 'x' ← 'input.image': datatype FP32 cannot feed INT32");
    expect(message).toContain('shape [-1, 3, 224, 224] has rank 4, [-1, 150528] needs 2');
    expect(message).toContain('shape [-1, 3, 224, 224] does not fit [-1, 1, 224, 224] (dim 1)');
    expect(message).toContain("step 'textForTensor' input 'x' ← 'input.label': text cannot feed tensor FP32");
    expect(message).toContain("'input.image' is tensor FP32[-1, 3, 224, 224]; only json values have fields");
    expect(message).not.toContain("step 'mapped'");
  });

  it('refuses a step named input and malformed options', () => {
    expect(
      refusal(() =>
        createPipeline({ name: 'r', steps: { input: { step: passthrough({}, {}) } }, outputs: {} }),
      ),
    ).toContain("step 'input': the name is reserved");
    expect(refusal(() => createPipeline({ name: '', steps: {}, outputs: {} }))).toContain('name');
  });
});

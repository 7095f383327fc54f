import { describe, expect, it } from 'vitest';
import { ErrorCode, InfergateError } from './errors.js';
import { buildInferRequest } from './infer-request.js';
import type { InputTensor } from './tensor.js';

const fp32 = (name: string): InputTensor => ({
  name,
  datatype: 'FP32',
  shape: [1, 2],
  data: new Float32Array([1, 2]),
});

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('buildInferRequest', () => {
  it('refuses an input name given twice with INVALID_ARGUMENT naming it', () => {
    const error = thrown(() => buildInferRequest('m', [fp32('A'), fp32('B'), fp32('A')]));
    expect(error).toBeInstanceOf(InfergateError);
    expect(error).toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: expect.stringContaining("input 'A' is given twice"),
    });
  });

  it('names the first repeated input among many (more than a scan covers)', () => {
    const inputs = Array.from({ length: 40 }, (_, index) => fp32(`I${index}`));
    inputs.push(fp32('I7'), fp32('I3'));
    expect(thrown(() => buildInferRequest('m', inputs))).toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: expect.stringContaining("input 'I7' is given twice"),
    });
  });

  it('reports an input that does not encode before a repeated name, as every input is encoded first', () => {
    const broken = { name: 'C', datatype: 'FP32', shape: [1, 3], data: new Float32Array(2) } as const;
    expect(thrown(() => buildInferRequest('m', [fp32('A'), fp32('A'), broken]))).toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: expect.stringContaining("input 'C'"),
    });
  });

  it('accepts distinct names and carries only the options given', () => {
    const plain = buildInferRequest('m', [fp32('A'), fp32('B')]);
    expect(plain.inputs.map((input) => input.name)).toEqual(['A', 'B']);
    expect(Object.keys(plain).sort()).toEqual(['inputs', 'model']);
    const full = buildInferRequest('m', [fp32('A')], {
      modelVersion: '2',
      requestId: 'r1',
      outputs: ['Y', { name: 'Z', classCount: 3 }],
      timeoutUs: 5,
    });
    expect(full).toMatchObject({
      model: 'm',
      modelVersion: '2',
      id: 'r1',
      outputs: [{ name: 'Y' }, { name: 'Z', classCount: 3 }],
      parameters: { timeout: { kind: 'int64', value: 5n } },
    });
  });
});

import { describe, expect, it } from 'vitest';
import { buildTritonInputs, type TritonInputSettings } from './triton-inputs.js';

const settings = (samplingStyle: TritonInputSettings['samplingStyle']): TritonInputSettings => ({
  inputName: 'text_input',
  outputName: 'text_output',
  batchDimension: false,
  samplingStyle,
  excludeInputInOutput: false,
  returnTokenCounts: false,
  returnFinishReason: false,
});

describe('buildTritonInputs: providerOptions as request parameters', () => {
  // JSON.parse makes an own `__proto__` key, as a provider option read from a config file would be.
  const providerOptions = JSON.parse('{"__proto__": "x", "constructor": 3, "toString": true, "seed": 7}');

  for (const style of ['tensors', 'parameters'] as const) {
    it(`${style}: every option is an own parameter, also one named like a member of every object`, () => {
      const { parameters } = buildTritonInputs(
        settings(style),
        'hi',
        { model: '', messages: [], providerOptions },
        false,
      );
      expect(Object.getPrototypeOf(parameters)).toBe(Object.prototype);
      expect(Object.hasOwn(parameters, '__proto__')).toBe(true);
      expect(Object.entries(parameters)).toEqual(
        expect.arrayContaining([
          ['__proto__', 'x'],
          ['constructor', 3],
          ['toString', true],
          ['seed', 7],
        ]),
      );
    });
  }

  it('an option that is not a scalar is refused, naming it', () => {
    expect(() =>
      buildTritonInputs(
        settings('parameters'),
        'hi',
        { model: '', messages: [], providerOptions: { bad: {} } },
        false,
      ),
    ).toThrow(/providerOptions\.bad must be a string, number or boolean/);
  });
});

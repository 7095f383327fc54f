// `identity_fp32_py`, the plain Python-backend FP32 identity that the unary bench suite's real-Triton
// half calls (bench/suites/unary.ts), loads in the interop run's Triton and answers both of the
// suite's shapes with the values it was sent, through @infergate/core's default engine.
import { describe, expect, it } from 'vitest';
import { sharedTritonClients } from './shared-triton.js';

const { client } = sharedTritonClients();

describe('identity_fp32_py (the unary suite’s real-Triton model)', () => {
  it('is a ready FP32 model taking a 2-D shape of any size', async () => {
    expect(await client.modelMetadata('identity_fp32_py')).toEqual({
      name: 'identity_fp32_py',
      versions: ['1'],
      platform: 'python',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [-1, -1] }],
      outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [-1, -1] }],
    });
    expect(await client.modelReady('identity_fp32_py')).toBe(true);
  });

  for (const elements of [16, 262_144]) {
    it(`returns an FP32 [1,${elements}] tensor unchanged`, async () => {
      const data = Float32Array.from({ length: elements }, (_, index) => index * 0.5 - 7.25);
      const result = await client.infer('identity_fp32_py', [
        { name: 'INPUT0', datatype: 'FP32', shape: [1, elements], data },
      ]);
      const output = result.output('OUTPUT0');
      expect(output.datatype).toBe('FP32');
      expect(output.shape).toEqual([1, elements]);
      expect(output.data).toBeInstanceOf(Float32Array);
      const received = output.data as Float32Array;
      expect(received.length).toBe(elements);
      let mismatches = 0;
      for (let index = 0; index < elements; index++) if (received[index] !== data[index]) mismatches++;
      expect(mismatches).toBe(0);
    });
  }
});

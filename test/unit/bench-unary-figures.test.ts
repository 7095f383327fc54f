import { describe, expect, it } from 'vitest';
import type { BenchCase } from '../../bench/lib.js';
import {
  armsForSize,
  chooseArms,
  REFERENCE_DEFAULT_ARMS,
  TRITON_DEFAULT_ARMS,
  TRITON_PREFIX,
  unaryRatios,
  unknownArms,
} from '../../bench/unary-figures.js';

function cell(arm: string, load: string, itemsPerSec: number, cpuMsPerCall: number): BenchCase {
  return { name: `${arm} ${load}`, arm, load, itemsPerSec, extra: { cpuMsPerCall } };
}

describe('unary suite: arms', () => {
  it('runs the defaults of each half, core_h2 only when named', () => {
    const options = { named: undefined, withPython: true, compare: false };
    expect(chooseArms({ ...options, defaults: REFERENCE_DEFAULT_ARMS })).toEqual([
      'core',
      'core_into',
      'core_tuned',
      'floor',
      'tc_aio',
      'tc_sync',
    ]);
    expect(chooseArms({ ...options, defaults: TRITON_DEFAULT_ARMS })).toEqual(['core', 'floor', 'tc_aio']);
    expect(chooseArms({ ...options, named: ['tc_aio', 'core_h2'], defaults: TRITON_DEFAULT_ARMS })).toEqual([
      'core_h2',
      'tc_aio',
    ]);
  });

  it('drops tritonclient without Python and adds the compared build exactly when one is given', () => {
    expect(
      chooseArms({
        named: ['core', 'tc_aio'],
        defaults: TRITON_DEFAULT_ARMS,
        withPython: false,
        compare: true,
      }),
    ).toEqual(['core', 'core_h2_before']);
    expect(
      chooseArms({
        named: ['core_h2_before'],
        defaults: TRITON_DEFAULT_ARMS,
        withPython: true,
        compare: false,
      }),
    ).toEqual([]);
  });

  it('measures core_into in the 1 MiB cells only', () => {
    expect(armsForSize(['core', 'core_into', 'tc_aio'], '')).toEqual(['core', 'tc_aio']);
    expect(armsForSize(['core', 'core_into', 'tc_aio'], '1MiB_')).toEqual(['core', 'core_into', 'tc_aio']);
  });

  it('names the arms it does not know', () => {
    expect(unknownArms(['core', 'tc_aoi', 'flor'])).toEqual(['tc_aoi', 'flor']);
    expect(unknownArms(undefined)).toEqual([]);
  });
});

describe('unary suite: figures', () => {
  const reference = [
    cell('core', 'c16', 6000, 0.05),
    cell('floor', 'c16', 2000, 0.25),
    cell('tc_aio', 'c16', 4000, 0.1),
    cell('core', '1MiB_c64', 300, 2),
    cell('tc_aio', '1MiB_c64', 400, 1.6),
  ];
  const triton = [
    cell('core', 'triton_1MiB_c16', 330, 2.2),
    cell('floor', 'triton_1MiB_c16', 110, 7),
    cell('tc_aio', 'triton_1MiB_c16', 440, 1.76),
  ];

  it('computes the reference half’s figures from its own cells only', () => {
    expect(unaryRatios([...reference, ...triton])).toEqual({
      core_vs_floor_c16: 3,
      core_vs_tritonclient_c16: 1.5,
      floor_vs_tritonclient_c16: 0.5,
      core_vs_tritonclient_1MiB_c64: 0.75,
      core_cpu_vs_tritonclient_c16: 0.5,
    });
  });

  it('prefixes the real-Triton half’s figures and leaves out what its arms cannot give', () => {
    expect(unaryRatios([...reference, ...triton], TRITON_PREFIX)).toEqual({
      triton_core_vs_floor_1MiB_c16: 3,
      triton_core_vs_tritonclient_1MiB_c16: 0.75,
      triton_floor_vs_tritonclient_1MiB_c16: 0.25,
      triton_core_cpu_vs_tritonclient_1MiB_c16: 1.25,
    });
  });

  it('reports core_into against tritonclient and core, for information, beside the named core figures', () => {
    const ratios = unaryRatios([...reference, cell('core_into', '1MiB_c64', 600, 1)]);
    expect(ratios).toMatchObject({
      core_vs_tritonclient_1MiB_c64: 0.75,
      core_into_vs_tritonclient_1MiB_c64: 1.5,
      core_into_vs_core_1MiB_c64: 2,
      core_into_cpu_vs_core_1MiB_c64: 0.5,
    });
  });

  it('gives no tritonclient figure at concurrency 1', () => {
    const ratios = unaryRatios([cell('core', 'c1', 3000, 0.1), cell('tc_aio', 'c1', 1500, 0.3)]);
    expect(ratios).toEqual({});
  });
});

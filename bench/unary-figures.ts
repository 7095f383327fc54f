// The unary suite's pure parts (bench/suites/unary.ts): which arms a run measures, and the named
// figures computed from its cases. Kept out of bench/suites/ (every file there is a suite) so that
// unit tests can import them without starting a server.
import type { BenchCase } from './lib.js';

export const UNARY_SIZES = [
  { label: '', elements: 16 },
  { label: '1MiB_', elements: 262_144 },
] as const;
export const UNARY_CONCURRENCIES = [1, 16, 64];

export const UNARY_ARMS = [
  'core',
  'core_into',
  'core_tuned',
  'core_h2',
  'core_h2_now',
  'core_h2_immediate',
  'core_h2_before',
  'floor',
  'tc_aio',
  'tc_sync',
] as const;
export type UnaryArm = (typeof UNARY_ARMS)[number];

/**
 * The reference-server half's arms when --arms is not given. `core_h2` is the default engine's own
 * code since decision 0017 (the same as `core`), so it runs only when named.
 */
export const REFERENCE_DEFAULT_ARMS: readonly UnaryArm[] = [
  'core',
  'core_into',
  'core_tuned',
  'floor',
  'tc_aio',
  'tc_sync',
];
/** The real-Triton half's arms when --triton-arms is not given: ours, the floor and NVIDIA's client. */
export const TRITON_DEFAULT_ARMS: readonly UnaryArm[] = ['core', 'floor', 'tc_aio'];

/**
 * The arms of one tensor size: `core_into` (outputs into caller memory, decision 0026) runs in the
 * 1 MiB cells only, where receive memory is what it saves; at 64 bytes there is nothing to save.
 */
export function armsForSize(arms: readonly UnaryArm[], sizeLabel: string): UnaryArm[] {
  return sizeLabel === '' ? arms.filter((arm) => arm !== 'core_into') : [...arms];
}

/** The load prefix of the real-Triton half's cases and figures (`triton_1MiB_c16`). */
export const TRITON_PREFIX = 'triton_';

/**
 * The arms a half measures, in UNARY_ARMS order: those named (else its defaults), without
 * tritonclient's when Python is missing; `core_h2_before` exactly when a build to compare is given.
 */
export function chooseArms(options: {
  named: readonly string[] | undefined;
  defaults: readonly UnaryArm[];
  withPython: boolean;
  compare: boolean;
}): UnaryArm[] {
  const wanted = options.named ?? options.defaults;
  return UNARY_ARMS.filter((arm) => {
    if (arm === 'core_h2_before') return options.compare;
    if (arm.startsWith('tc_') && !options.withPython) return false;
    return wanted.includes(arm);
  });
}

/** Names that --arms or --triton-arms gave but no arm has (a typo must not narrow a run silently). */
export function unknownArms(named: readonly string[] | undefined): string[] {
  return (named ?? []).filter((name) => !(UNARY_ARMS as readonly string[]).includes(name));
}

/**
 * The figures of one half, from its cases (loads `${prefix}${size label}c${concurrency}`): items/s
 * ratios between arms, and client CPU per call against tritonclient.aio at c16. Figures whose arms
 * the run left out are not returned.
 */
export function unaryRatios(cases: readonly BenchCase[], prefix = ''): Record<string, number> {
  const cell = (arm: UnaryArm, load: string) =>
    cases.find((entry) => entry.arm === arm && entry.load === load);
  const items = (arm: UnaryArm, load: string) => cell(arm, load)?.itemsPerSec ?? Number.NaN;
  const cpu = (arm: UnaryArm, load: string) => {
    const value = cell(arm, load)?.extra?.cpuMsPerCall;
    return typeof value === 'number' ? value : Number.NaN;
  };
  const ratios: Record<string, number> = {};
  const put = (key: string, value: number) => {
    if (Number.isFinite(value)) ratios[`${prefix}${key}`] = value;
  };
  for (const size of UNARY_SIZES) {
    for (const concurrency of UNARY_CONCURRENCIES) {
      const cellName = `${size.label}c${concurrency}`;
      const load = `${prefix}${cellName}`;
      const vs = (a: UnaryArm, b: UnaryArm) => items(a, load) / items(b, load);
      put(`core_vs_floor_${cellName}`, vs('core', 'floor'));
      put(`core_h2_vs_floor_${cellName}`, vs('core_h2', 'floor'));
      put(`core_h2_vs_core_${cellName}`, vs('core_h2', 'core'));
      put(`core_h2_vs_before_${cellName}`, vs('core_h2', 'core_h2_before'));
      put(`core_h2_cpu_vs_before_${cellName}`, cpu('core_h2', load) / cpu('core_h2_before', load));
      put(`core_h2_now_vs_core_h2_${cellName}`, vs('core_h2_now', 'core_h2'));
      put(`core_h2_immediate_vs_core_h2_${cellName}`, vs('core_h2_immediate', 'core_h2'));
      put(`core_tuned_vs_core_${cellName}`, vs('core_tuned', 'core'));
      // For information: the named figures keep measuring the default `core` arm.
      put(`core_into_vs_core_${cellName}`, vs('core_into', 'core'));
      put(`core_into_cpu_vs_core_${cellName}`, cpu('core_into', load) / cpu('core', load));
      if (concurrency > 1) {
        put(`core_vs_tritonclient_${cellName}`, vs('core', 'tc_aio'));
        put(`core_h2_vs_tritonclient_${cellName}`, vs('core_h2', 'tc_aio'));
        put(`core_h2_before_vs_tritonclient_${cellName}`, vs('core_h2_before', 'tc_aio'));
        put(`floor_vs_tritonclient_${cellName}`, vs('floor', 'tc_aio'));
        put(`core_into_vs_tritonclient_${cellName}`, vs('core_into', 'tc_aio'));
      }
    }
  }
  put('core_cpu_vs_tritonclient_c16', cpu('core', `${prefix}c16`) / cpu('tc_aio', `${prefix}c16`));
  put('core_h2_cpu_vs_tritonclient_c16', cpu('core_h2', `${prefix}c16`) / cpu('tc_aio', `${prefix}c16`));
  put(
    'core_cpu_vs_tritonclient_1MiB_c16',
    cpu('core', `${prefix}1MiB_c16`) / cpu('tc_aio', `${prefix}1MiB_c16`),
  );
  return ratios;
}

// Runs jobs through the official tritonclient (tritonclient_probe.py) to compare @infergate/core with
// it byte for byte: what tritonclient puts on the wire and what it gets back (base64).
import { runPython } from './triton-harness.js';

export interface ProbeResult {
  request: {
    raw_input_contents_b64: string[];
    inputs: { name: string; datatype: string; shape: number[]; parameters: Record<string, unknown> }[];
  };
  response?: {
    id: string;
    outputs: { name: string; datatype: string; shape: number[]; raw_b64: string | null }[];
  };
  error?: { message: string; status: string };
}

export type ProbeInput =
  | { name: string; datatype: string; shape: number[]; values: (number | string | boolean)[] }
  | { name: string; datatype: 'BYTES'; shape: number[]; data_b64_list: string[] };

export interface ProbeJob {
  model_name: string;
  inputs: ProbeInput[];
  outputs?: (string | { name: string; class_count: number })[];
  dry_run?: boolean;
}

/** Runs jobs through tritonclient against the server at `url` (one Python process for all of them). */
export async function probeTritonclient(url: string, jobs: ProbeJob[]): Promise<ProbeResult[]> {
  const out = await runPython(
    'tritonclient_probe.py',
    [],
    JSON.stringify(jobs.map((job) => ({ url, ...job }))),
  );
  return JSON.parse(out) as ProbeResult[];
}

export const hex = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
export const b64hex = (b64: string | null | undefined) => Buffer.from(b64 ?? '', 'base64').toString('hex');

/** What the Python side should parse: JSON cannot carry NaN, ±Infinity, -0 or 64-bit integers. */
export function probeValue(value: number | bigint | boolean): number | string | boolean {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    if (Object.is(value, -0)) return '-0.0';
    if (!Number.isFinite(value)) return String(value);
  }
  return value;
}

// Runs jobs through the official tritonclient.http (tritonclient_http_probe.py): the exact body it
// POSTs and the exact body Triton answers it with, to compare the HTTP transport byte for byte.
import { runPython } from './triton-harness.js';
import type { ProbeInput } from './tritonclient-probe.js';

export interface HttpProbeJob {
  model_name: string;
  inputs: ProbeInput[];
  outputs?: string[];
  /** tritonclient's `binary_data` for inputs and outputs. @default true */
  binary_data?: boolean;
}

export interface HttpProbeResult {
  request: { json: Record<string, unknown>; json_size: number | null; binary_b64: string };
  response?: {
    header_length: number | null;
    json: Record<string, unknown>;
    binary_b64: string;
    outputs: { name: string; datatype: string; shape: number[]; raw_b64: string }[];
  };
  error?: { message: string; status: string };
}

/** Runs jobs through tritonclient.http against the server's HTTP port `address` (host:port). */
export async function probeTritonclientHttp(
  address: string,
  jobs: HttpProbeJob[],
): Promise<HttpProbeResult[]> {
  const out = await runPython(
    'tritonclient_http_probe.py',
    [],
    JSON.stringify(jobs.map((job) => ({ url: address, ...job }))),
  );
  return JSON.parse(out) as HttpProbeResult[];
}

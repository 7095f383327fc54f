import { type InferRequest, inSharedMemory, type Parameters } from '@infergate/core';

/** What the batcher learns about one call before queueing it. */
export interface BatchableCall {
  /** Calls with equal keys may share a batch. */
  key: string;
  /** shape[0], the same for every input. */
  rows: number;
  /** Input bytes (for the queue's byte bound). */
  bytes: number;
}

/** Request parameters that make a call unbatchable: state that belongs to one sequence. */
const SEQUENCE_PARAMETERS = ['sequence_id', 'sequence_start', 'sequence_end'];

function stableValue(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([name, inner]) => `${JSON.stringify(name)}:${stableValue(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

function parametersKey(parameters: Parameters | undefined, skip?: string): string {
  if (parameters === undefined) return '';
  const names = Object.keys(parameters)
    .filter((name) => name !== skip)
    .sort();
  return names.map((name) => `${JSON.stringify(name)}=${stableValue(parameters[name])}`).join(',');
}

/**
 * The bucket a call belongs to, or undefined when it cannot be batched (no common batch dimension,
 * shared memory, a stateful sequence, zero rows). Calls share a batch only when everything but the
 * batch dimension matches: model, version, priority, headers, each input's name, datatype, non-batch
 * dims and parameters (in order), the requested outputs and the request parameters.
 */
export function batchableCall(
  request: InferRequest,
  priority: number,
  headers: Readonly<Record<string, string>> | undefined,
): BatchableCall | undefined {
  const { inputs, parameters } = request;
  const first = inputs[0];
  if (first === undefined || first.shape.length === 0) return undefined;
  const rows = first.shape[0] as number;
  if (!(rows >= 1)) return undefined;
  if (parameters !== undefined && SEQUENCE_PARAMETERS.some((name) => parameters[name] !== undefined))
    return undefined;
  let bytes = 0;
  let key = `${request.model}\u0000${request.modelVersion ?? ''}\u0000${priority}\u0000`;
  for (const input of inputs) {
    if (input.shape.length === 0 || input.shape[0] !== rows || inSharedMemory(input)) return undefined;
    bytes += input.raw.byteLength;
    key += `${input.name}:${input.datatype}:${input.shape.slice(1).join('x')}:${parametersKey(input.parameters)};`;
  }
  key += '\u0000';
  if (request.outputs !== undefined) {
    for (const output of request.outputs) {
      if (output.sharedMemory !== undefined) return undefined;
      key += `${output.name}:${output.classCount ?? ''}:${parametersKey(output.parameters)};`;
    }
  } else key += '*';
  key += `\u0000${parametersKey(parameters, 'priority')}`;
  if (headers !== undefined) key += `\u0000${parametersKey(headers)}`;
  return { key, rows, bytes };
}

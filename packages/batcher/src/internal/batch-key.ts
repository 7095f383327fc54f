import { type InferRequest, inSharedMemory, type Parameters } from '@infergate/core';

/** What the batcher learns about one call before admitting it. */
export interface BatchShape {
  /** shape[0], the same for every input. */
  rows: number;
  /** Input bytes (for the queue's byte bound). */
  bytes: number;
}

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
 * The rows and bytes of a call that can be batched, or undefined when it cannot (no common batch
 * dimension, shared memory, a stateful sequence, zero rows). Cheap: admission runs on it, before
 * the bucket key is built.
 */
export function batchShape(request: InferRequest): BatchShape | undefined {
  const { inputs, parameters } = request;
  const first = inputs[0];
  if (first === undefined || first.shape.length === 0) return undefined;
  const rows = first.shape[0] as number;
  if (!(rows >= 1)) return undefined;
  if (
    parameters !== undefined &&
    (parameters.sequence_id !== undefined ||
      parameters.sequence_start !== undefined ||
      parameters.sequence_end !== undefined)
  )
    return undefined;
  let bytes = 0;
  for (const input of inputs) {
    if (input.shape.length === 0 || input.shape[0] !== rows || inSharedMemory(input)) return undefined;
    bytes += input.raw.byteLength;
  }
  if (request.outputs !== undefined) {
    for (const output of request.outputs) if (output.sharedMemory !== undefined) return undefined;
  }
  return { rows, bytes };
}

/**
 * The bucket of a batchable call (see `batchShape`). Calls share a batch only when everything but
 * the batch dimension matches: model, version, priority, headers, each input's name, datatype,
 * non-batch dims and parameters (in order), the requested outputs and the request parameters.
 */
export function batchKey(
  request: InferRequest,
  priority: number,
  headers: Readonly<Record<string, string>> | undefined,
): string {
  const { parameters } = request;
  let key = `${request.model}\u0000${request.modelVersion ?? ''}\u0000${priority}\u0000`;
  for (const input of request.inputs) {
    key += `${input.name}:${input.datatype}:`;
    const { shape } = input;
    for (let dim = 1; dim < shape.length; dim++) key += dim === 1 ? `${shape[dim]}` : `x${shape[dim]}`;
    key += `:${parametersKey(input.parameters)};`;
  }
  key += '\u0000';
  if (request.outputs !== undefined) {
    for (const output of request.outputs) {
      key += `${output.name}:${output.classCount ?? ''}:${parametersKey(output.parameters)};`;
    }
  } else key += '*';
  key += `\u0000${parametersKey(parameters, 'priority')}`;
  if (headers !== undefined) key += `\u0000${parametersKey(headers)}`;
  return key;
}

/** What a bucket remembers of its first call, to recognise calls of the same layout cheaply. */
export interface BucketTemplate {
  readonly request: InferRequest;
  readonly priority: number;
  readonly headers: Readonly<Record<string, string>> | undefined;
}

/**
 * Whether a call has the layout of `template`'s bucket, checked field by field without building
 * its key: true or false when that is certain, undefined when the call carries parameters, headers
 * or requested outputs (then the key decides). Agrees with `batchKey`: equal layouts, equal keys.
 */
export function sameLayout(
  template: BucketTemplate,
  request: InferRequest,
  priority: number,
  headers: Readonly<Record<string, string>> | undefined,
): boolean | undefined {
  const known = template.request;
  if (
    headers !== undefined ||
    template.headers !== undefined ||
    request.parameters !== undefined ||
    known.parameters !== undefined ||
    request.outputs !== undefined ||
    known.outputs !== undefined
  )
    return undefined;
  if (
    priority !== template.priority ||
    request.model !== known.model ||
    (request.modelVersion ?? '') !== (known.modelVersion ?? '')
  )
    return false;
  const { inputs } = request;
  if (inputs.length !== known.inputs.length) return false;
  for (let index = 0; index < inputs.length; index++) {
    const input = inputs[index] as InferRequest['inputs'][number];
    const other = known.inputs[index] as InferRequest['inputs'][number];
    if (input.parameters !== undefined || other.parameters !== undefined) return undefined;
    if (input.name !== other.name || input.datatype !== other.datatype) return false;
    const { shape } = input;
    if (shape.length !== other.shape.length) return false;
    for (let dim = 1; dim < shape.length; dim++) if (shape[dim] !== other.shape[dim]) return false;
  }
  return true;
}

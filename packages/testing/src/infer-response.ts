import { create, toBinary } from '@bufbuild/protobuf';
import { type EncodedTensor, encodeTensor, InfergateError, type Parameters } from '@infergate/core';
import { classify } from './classification.js';
import { status } from './internal/grpc-status.js';
import { toWireParameters } from './internal/parameters.js';
import { type ModelInferResponse, ModelInferResponseSchema } from './internal/proto.js';
import type { ExecuteOutput, ExecuteRequest } from './model-definition.js';
import { RpcError } from './rpc-error.js';
import type { SharedMemoryRef, SharedMemoryRegistry } from './shared-memory.js';

function encodeOutput(model: string, output: ExecuteOutput): EncodedTensor {
  if ('raw' in output && output.raw instanceof Uint8Array) return output;
  try {
    return encodeTensor(output as Exclude<ExecuteOutput, EncodedTensor>);
  } catch (error) {
    // A bad output is the model's fault, not the caller's: INTERNAL, as a crashing backend would be.
    const message = error instanceof InfergateError ? error.rawMessage : String(error);
    throw new RpcError(status.INTERNAL, `model '${model}' produced an invalid output: ${message}`);
  }
}

/** How the request asked for each output: classification and shared memory placement. */
export interface OutputPlacement {
  /** Top-k classification requested with the output's `classification` parameter. */
  classification?: number;
  /** Write the output into this shared memory region instead of the response. */
  shm?: SharedMemoryRef;
}

export interface ResponseContext {
  /** Per requested output name. */
  placements?: ReadonlyMap<string, OutputPlacement>;
  shm?: SharedMemoryRegistry;
  /** The model batches (max_batch_size > 0): classification keeps the batch dimension. */
  batching?: boolean;
  labels?: Readonly<Record<string, readonly string[]>>;
  /** Configured rank (dims without the batch dimension) per output name. */
  ranks?: Readonly<Record<string, number>>;
  /** Response parameters (e.g. triton_final_response). */
  parameters?: Parameters;
}

/**
 * The response for the requested outputs, in the order they were requested. As in Triton
 * (infer_handler.cc, ResponseAllocatorHelper), an output written to shared memory keeps its entry
 * in `outputs` and gets an empty `raw_output_contents` entry, so indices stay aligned.
 */
export function buildInferResponse(
  request: ExecuteRequest,
  outputs: readonly ExecuteOutput[],
  context: ResponseContext = {},
): ModelInferResponse {
  const tensors: EncodedTensor[] = [];
  const raws: Uint8Array[] = [];
  for (const name of request.requestedOutputs) {
    const output = outputs.find((candidate) => candidate.name === name);
    if (output === undefined) {
      if (!request.outputsNamed) continue;
      throw new RpcError(status.INTERNAL, `model '${request.model}' produced no output '${name}'`);
    }
    let tensor = encodeOutput(request.model, output);
    const placement = context.placements?.get(name);
    if (placement?.classification !== undefined) {
      tensor = classify(
        tensor,
        placement.classification,
        context.batching === true,
        context.labels?.[name],
        context.ranks?.[name],
      );
    }
    tensors.push(tensor);
    if (placement?.shm !== undefined && context.shm !== undefined) {
      context.shm.write(placement.shm, name, tensor.raw);
      raws.push(new Uint8Array(0));
    } else {
      raws.push(tensor.raw);
    }
  }
  return create(ModelInferResponseSchema, {
    modelName: request.model,
    modelVersion: request.version,
    id: request.id,
    parameters: toWireParameters(context.parameters),
    outputs: tensors.map((tensor) => ({
      name: tensor.name,
      datatype: tensor.datatype,
      shape: tensor.shape.map((dim) => BigInt(dim)),
      parameters: toWireParameters(tensor.parameters),
    })),
    rawOutputContents: raws,
  });
}

/**
 * Breaks the response on purpose: the first output's bytes no longer match its declared shape, so
 * a client that checks (as it must) reports DATA_LOSS.
 */
export function corruptInferResponse(response: ModelInferResponse): ModelInferResponse {
  const [first, ...rest] = response.rawOutputContents;
  const broken = first === undefined || first.byteLength === 0 ? new Uint8Array(1) : first.subarray(1);
  return { ...response, rawOutputContents: [broken, ...rest] };
}

const RAW_OUTPUT_CONTENTS_TAG = (6 << 3) | 2;

function varintLength(value: number): number {
  let length = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 128)) length++;
  return length;
}

function writeVarint(out: Buffer, offset: number, value: number): number {
  let rest = value;
  while (rest >= 0x80) {
    out[offset++] = (rest % 128) | 0x80;
    rest = Math.floor(rest / 128);
  }
  out[offset++] = rest;
  return offset;
}

/**
 * Serializes a ModelInferResponse with one allocation and one copy per tensor: the small part goes
 * through the protobuf encoder, each `raw_output_contents` entry (field 6) is appended by hand.
 * `headroom` bytes are left free at the start (for the gRPC message prefix).
 */
export function serializeInferResponse(response: ModelInferResponse, headroom = 0): Buffer {
  const raws = response.rawOutputContents;
  const head = toBinary(ModelInferResponseSchema, { ...response, rawOutputContents: [] });
  let total = headroom + head.byteLength;
  for (const raw of raws) total += 1 + varintLength(raw.byteLength) + raw.byteLength;
  const out = Buffer.allocUnsafe(total);
  out.set(head, headroom);
  let offset = headroom + head.byteLength;
  for (const raw of raws) {
    out[offset++] = RAW_OUTPUT_CONTENTS_TAG;
    offset = writeVarint(out, offset, raw.byteLength);
    out.set(raw, offset);
    offset += raw.byteLength;
  }
  return out;
}

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
    } else if (context.shm?.holds(tensor.raw) === true) {
      // An input read from shared memory, echoed: the next request on that region rewrites it.
      raws.push(new Uint8Array(tensor.raw));
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
 * A `raw_output_contents` entry of at least this many bytes is sent as it is, a chunk of its own
 * (node:http2 writes it to the socket without a copy); smaller ones are copied in with the rest.
 */
export const SEND_AS_IS_BYTES = 16 * 1024;

/**
 * Serializes a ModelInferResponse as chunks that concatenate to the message: the small part goes
 * through the protobuf encoder, each `raw_output_contents` entry (field 6) follows with its tag and
 * length written by hand; an entry of SEND_AS_IS_BYTES or more is its own chunk, the tensor's own
 * memory (a 1 MiB output is not copied into a fresh megabyte per call, which the garbage collector
 * then had to find). `headroom` bytes are left free at the start (for the gRPC message prefix).
 */
export function serializeInferResponseChunks(response: ModelInferResponse, headroom = 0): Buffer[] {
  const raws = response.rawOutputContents;
  const head = toBinary(ModelInferResponseSchema, { ...response, rawOutputContents: [] });
  // The lengths of the copied runs between the entries sent as they are.
  const runs: number[] = [];
  let run = headroom + head.byteLength;
  for (const raw of raws) {
    run += 1 + varintLength(raw.byteLength);
    if (raw.byteLength >= SEND_AS_IS_BYTES) {
      runs.push(run);
      run = 0;
    } else run += raw.byteLength;
  }
  runs.push(run);
  const chunks: Buffer[] = [];
  let index = 0;
  let out = Buffer.allocUnsafe(runs[0] as number);
  out.set(head, headroom);
  let offset = headroom + head.byteLength;
  for (const raw of raws) {
    out[offset++] = RAW_OUTPUT_CONTENTS_TAG;
    offset = writeVarint(out, offset, raw.byteLength);
    if (raw.byteLength >= SEND_AS_IS_BYTES) {
      chunks.push(out, Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength));
      out = Buffer.allocUnsafe(runs[++index] as number);
      offset = 0;
    } else {
      out.set(raw, offset);
      offset += raw.byteLength;
    }
  }
  if (out.byteLength > 0) chunks.push(out);
  return chunks;
}

/** The same message as one buffer (the grpc-js transport's encoder takes one). */
export function serializeInferResponse(response: ModelInferResponse, headroom = 0): Buffer {
  const chunks = serializeInferResponseChunks(response, headroom);
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

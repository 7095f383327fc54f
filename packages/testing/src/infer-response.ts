import { create, toBinary } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { type EncodedTensor, encodeTensor, InfergateError } from '@infergate/core';
import { toWireParameters } from './internal/parameters.js';
import { type ModelInferResponse, ModelInferResponseSchema } from './internal/proto.js';
import type { ExecuteOutput, ExecuteRequest } from './model-definition.js';
import { RpcError } from './rpc-error.js';

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

/** The response for the requested outputs, in the order they were requested. */
export function buildInferResponse(
  request: ExecuteRequest,
  outputs: readonly ExecuteOutput[],
): ModelInferResponse {
  const tensors: EncodedTensor[] = [];
  for (const name of request.requestedOutputs) {
    const output = outputs.find((candidate) => candidate.name === name);
    if (output === undefined) {
      throw new RpcError(status.INTERNAL, `model '${request.model}' produced no output '${name}'`);
    }
    tensors.push(encodeOutput(request.model, output));
  }
  return create(ModelInferResponseSchema, {
    modelName: request.model,
    modelVersion: request.version,
    id: request.id,
    outputs: tensors.map((tensor) => ({
      name: tensor.name,
      datatype: tensor.datatype,
      shape: tensor.shape.map((dim) => BigInt(dim)),
      parameters: toWireParameters(tensor.parameters),
    })),
    rawOutputContents: tensors.map((tensor) => tensor.raw),
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

/**
 * Serializes a ModelInferResponse with one allocation and one copy per tensor: the small part goes
 * through the protobuf encoder, each `raw_output_contents` entry (field 6) is appended by hand.
 */
export function serializeInferResponse(response: ModelInferResponse): Buffer {
  const raws = response.rawOutputContents;
  const head = toBinary(ModelInferResponseSchema, { ...response, rawOutputContents: [] });
  let total = head.byteLength;
  for (const raw of raws) total += 1 + varintLength(raw.byteLength) + raw.byteLength;
  const out = Buffer.allocUnsafe(total);
  out.set(head, 0);
  let offset = head.byteLength;
  for (const raw of raws) {
    out[offset++] = RAW_OUTPUT_CONTENTS_TAG;
    for (let rest = raw.byteLength; ; rest = Math.floor(rest / 128)) {
      if (rest < 0x80) {
        out[offset++] = rest;
        break;
      }
      out[offset++] = (rest % 128) | 0x80;
    }
    out.set(raw, offset);
    offset += raw.byteLength;
  }
  return out;
}

import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { ErrorCode, InfergateError } from '../errors.js';
import {
  type InferParameter,
  InferParameterSchema,
  type ModelInferRequest,
  ModelInferRequestSchema,
  type ModelInferResponse,
  ModelInferResponseSchema,
} from '../gen/grpc_service_pb.js';
import { type Parameters, toWireParameter } from '../parameters.js';
import { sharedMemoryParameters } from '../tensor.js';
import type { InferRequest } from '../transport.js';
import { setEntry } from './infer-response.js';
import { readModelInferResponse } from './infer-response-reader.js';

export {
  checkRequestedOutputs,
  fromModelInferResponse,
  fromParameterMap,
  sharedMemoryOutputs,
} from './infer-response.js';

export function toParameterMap(parameters: Parameters | undefined): Record<string, InferParameter> {
  const out: Record<string, InferParameter> = {};
  if (parameters === undefined) return out;
  for (const [name, value] of Object.entries(parameters)) {
    setEntry(out, name, create(InferParameterSchema, { parameterChoice: toWireParameter(name, value) }));
  }
  return out;
}

/** Builds the protobuf message, without the raw tensor bytes (appended separately, see below). */
export function toModelInferRequest(request: InferRequest, extraParameters?: Parameters): ModelInferRequest {
  return create(ModelInferRequestSchema, {
    modelName: request.model,
    modelVersion: request.modelVersion ?? '',
    id: request.id ?? '',
    parameters: toParameterMap(
      extraParameters ? { ...request.parameters, ...extraParameters } : request.parameters,
    ),
    inputs: request.inputs.map((input) => ({
      name: input.name,
      datatype: input.datatype,
      shape: input.shape.map((dim) => BigInt(dim)),
      parameters: toParameterMap(input.parameters),
    })),
    outputs: (request.outputs ?? []).map((output) => ({
      name: output.name,
      parameters: toParameterMap({
        ...output.parameters,
        ...(output.classCount !== undefined ? { classification: output.classCount } : {}),
        ...(output.sharedMemory !== undefined ? sharedMemoryParameters(output.sharedMemory) : {}),
      }),
    })),
  });
}

const RAW_INPUT_CONTENTS_TAG = (7 << 3) | 2;

function varintLength(value: number): number {
  let length = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    length++;
  }
  return length;
}

function writeVarint(target: Buffer, offset: number, value: number): number {
  while (value >= 0x80) {
    target[offset++] = (value % 128) | 0x80;
    value = Math.floor(value / 128);
  }
  target[offset++] = value;
  return offset;
}

/**
 * Serializes a ModelInferRequest with the tensors' raw bytes. Protobuf lets fields of one message be
 * concatenated, so the small part goes through the protobuf encoder and each `raw_input_contents`
 * entry (field 7) is appended by hand: one allocation and one copy per tensor.
 */
export function serializeInferRequest(message: ModelInferRequest, raws: readonly Uint8Array[]): Buffer {
  const head = toBinary(ModelInferRequestSchema, message);
  let total = head.byteLength;
  for (const raw of raws) total += 1 + varintLength(raw.byteLength) + raw.byteLength;
  const out = Buffer.allocUnsafe(total);
  out.set(head, 0);
  let offset = head.byteLength;
  for (const raw of raws) {
    out[offset++] = RAW_INPUT_CONTENTS_TAG;
    offset = writeVarint(out, offset, raw.byteLength);
    out.set(raw, offset);
    offset += raw.byteLength;
  }
  return out;
}

/** Parses a ModelInferResponse; bytes that are not one are DATA_LOSS (the answer is corrupt). */
export function parseModelInferResponse(bytes: Uint8Array): ModelInferResponse {
  try {
    return readModelInferResponse(bytes) ?? fromBinary(ModelInferResponseSchema, bytes);
  } catch (error) {
    throw new InfergateError(
      ErrorCode.DataLoss,
      `the server's answer is not a ModelInferResponse: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

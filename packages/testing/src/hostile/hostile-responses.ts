import { randomBytes } from 'node:crypto';
import { create, type MessageInitShape, toBinary } from '@bufbuild/protobuf';
import {
  type ModelInferResponse,
  ModelInferResponseSchema,
  ModelStreamInferResponseSchema,
} from '../internal/proto.js';

/**
 * What the hostile server does wrong, chosen by the model name a request names. Each one is a way a
 * broken or malicious server can answer; a client must turn each into a typed error without
 * crashing, hanging, or allocating by a size the server declared before checking it.
 */
export const HOSTILE_BEHAVIORS = [
  /** The message is random bytes (starting with an invalid protobuf tag, so it never parses). */
  'random-bytes',
  /** A gRPC frame whose header declares 1 GiB, followed by 16 bytes and the end of the stream. */
  'truncated-frame',
  /** FP32 output of shape [4] with 7 bytes in raw_output_contents. */
  'raw-length-mismatch',
  /** FP32 output of shape [1e12] with 16 bytes. */
  'huge-shape',
  /** BYTES output of shape [1e12] with one 3-byte element. */
  'huge-bytes-shape',
  /** An output of shape [-4]. */
  'negative-dim',
  /** No outputs at all, though the request names OUTPUT0. */
  'missing-output',
  /** One output and three raw_output_contents entries. */
  'extra-outputs',
  /** An output of datatype 'FP128'. */
  'unknown-datatype',
  /** BYTES output whose second length prefix says 1 GiB inside a 16-byte buffer. */
  'bytes-overrun',
  /** Streams: one response without triton_final_response, then a clean end of stream. */
  'no-final-flag',
  /** Streams: one response without triton_final_response, then nothing, the stream left open. */
  'stall',
] as const;

export type HostileBehavior = (typeof HOSTILE_BEHAVIORS)[number];

export function isHostileBehavior(name: string): name is HostileBehavior {
  return (HOSTILE_BEHAVIORS as readonly string[]).includes(name);
}

function response(model: string, init: Omit<MessageInitShape<typeof ModelInferResponseSchema>, '$typeName'>) {
  return create(ModelInferResponseSchema, { modelName: model, modelVersion: '1', id: '', ...init });
}

function bytesElements(...elements: string[]): Uint8Array {
  const parts = elements.map((element) => Buffer.from(element, 'utf8'));
  const out = Buffer.alloc(parts.reduce((sum, part) => sum + 4 + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.writeUInt32LE(part.byteLength, offset);
    part.copy(out, offset + 4);
    offset += 4 + part.byteLength;
  }
  return out;
}

const fp32 = (values: number[]) => new Uint8Array(new Float32Array(values).buffer);

/** The ModelInferResponse a behavior sends (undefined for the ones that are not a message). */
export function hostileInferResponse(
  behavior: HostileBehavior,
  model: string,
): ModelInferResponse | undefined {
  const output = (datatype: string, shape: bigint[]) => ({ name: 'OUTPUT0', datatype, shape });
  switch (behavior) {
    case 'raw-length-mismatch':
      return response(model, { outputs: [output('FP32', [4n])], rawOutputContents: [new Uint8Array(7)] });
    case 'huge-shape':
      return response(model, {
        outputs: [output('FP32', [1_000_000_000_000n])],
        rawOutputContents: [fp32([1, 2, 3, 4])],
      });
    case 'huge-bytes-shape':
      return response(model, {
        outputs: [output('BYTES', [1_000_000_000_000n])],
        rawOutputContents: [bytesElements('abc')],
      });
    case 'negative-dim':
      return response(model, { outputs: [output('FP32', [-4n])], rawOutputContents: [fp32([1, 2, 3, 4])] });
    case 'missing-output':
      return response(model, {});
    case 'extra-outputs':
      return response(model, {
        outputs: [output('FP32', [1n])],
        rawOutputContents: [fp32([1]), fp32([2]), fp32([3])],
      });
    case 'unknown-datatype':
      return response(model, { outputs: [output('FP128', [1n])], rawOutputContents: [new Uint8Array(16)] });
    case 'bytes-overrun': {
      const raw = Buffer.alloc(16);
      raw.writeUInt32LE(2, 0);
      raw.write('ok', 4);
      raw.writeUInt32LE(1024 ** 3, 6);
      return response(model, { outputs: [output('BYTES', [2n])], rawOutputContents: [raw] });
    }
    case 'no-final-flag':
    case 'stall':
      return response(model, { outputs: [output('FP32', [1n])], rawOutputContents: [fp32([1])] });
    default:
      return undefined;
  }
}

/** Random bytes that can never parse as protobuf: tag byte 0xff is field 31 with wire type 7. */
export function unparseableBytes(length = 64): Buffer {
  return Buffer.concat([Buffer.from([0xff]), randomBytes(length - 1)]);
}

/** The message bytes of a unary ModelInfer answer. */
export function unaryMessage(behavior: HostileBehavior, model: string): Uint8Array {
  const message = hostileInferResponse(behavior, model);
  return message === undefined ? unparseableBytes() : toBinary(ModelInferResponseSchema, message);
}

/** The message bytes of one ModelStreamInfer answer. */
export function streamMessage(behavior: HostileBehavior, model: string): Uint8Array {
  const message = hostileInferResponse(behavior, model);
  if (message === undefined) return unparseableBytes();
  return toBinary(
    ModelStreamInferResponseSchema,
    create(ModelStreamInferResponseSchema, { inferResponse: message }),
  );
}

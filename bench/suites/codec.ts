// Suite `codec`: the cost of turning tensors into wire messages and back, against the memcpy floor
// (`Buffer.prototype.copy` of the same number of bytes into a buffer allocated once). FP32, INT64,
// FP16 and BYTES from 1 KiB to 64 MiB; the arms of one cell run interleaved, order rotated each
// round, median of the rounds. Plus BYTES encode of 10k short strings against NVIDIA's
// `tritonclient.utils.serialize_byte_tensor` (interop venv) in the same run.
//   pnpm bench codec [--rounds 3] [--max-mib 64] [--no-python] [--engine grpc-js|http2]
// (3 rounds since 2026-12-02: the medians of the first 3 of a 5-round run stayed within 20 % of all 5
// and far from every target, 13-6,600× memcpy against >= 0.5 and 2.06 against 1.90 for BYTES vs
// tritonclient, for 2 minutes less of `pnpm bench`.)
//
// Arms (time per tensor):
//   encode        buildInferRequest + the ModelInferRequest writer, joined into one buffer (what
//                 the grpc-js engine sends)
//   encode_chunks the same, left as chunks (what the http2 engine hands to the socket: no copy)
//   encode_before the previous path: protobuf message object + toBinary + appended raw bytes
//   encode_runtime the tensor through @bufbuild/protobuf's generic bytes field (raw_input_contents)
//   decode_grpcjs  the response message as grpc-js hands it over (one Buffer, the message at its
//                  start) → InferResult → .data: a view when the tensor's offset happens to be
//                  aligned, else a copy into fresh memory
//   decode_h2      the same message as the http2 engine hands it over (reassembled with the first
//                  raw output 8-byte aligned) → .data
//   receive_grpcjs / receive_h2  the same, including the reassembly from 16 KiB DATA frames
//                  (Buffer.concat for grpc-js, the engine's aligned assembly for http2)
//   memcpy         src.copy(dst) of the wire bytes into a buffer allocated once
// `decode` in the named figures is the path of the default engine (--engine to choose).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import { buildInferRequest, createTritonClient, InferResult, type InputTensor } from '@infergate/core';
import {
  ModelInferRequestSchema,
  ModelInferResponseSchema,
} from '../../packages/core/src/gen/grpc_service_pb.js';
import { encodeInferRequest, joinChunks } from '../../packages/core/src/internal/infer-request-writer.js';
import {
  fromModelInferResponse,
  parseModelInferResponse,
  serializeInferRequest,
  toModelInferRequest,
} from '../../packages/core/src/internal/infer-wire.js';
import { type BenchCase, flag, median, packageVersion, ROOT, report, round } from '../lib.js';

const PYTHON = join(ROOT, 'test/interop/.venv/bin/python');
const SCRIPT = join(ROOT, 'bench/suites/codec_tritonclient.py');
const KiB = 1024;
const MiB = 1024 * KiB;
const DATATYPES = ['FP32', 'INT64', 'FP16', 'BYTES'] as const;
type Datatype = (typeof DATATYPES)[number];
/** BYTES elements for the size sweep: 60 characters, 64 bytes on the wire with the length prefix. */
const BYTES_ELEMENT = 60;
/** The engine `createTritonClient` uses when none is given, read from a client (it connects lazily). */
async function defaultEngine(): Promise<'grpc-js' | 'http2'> {
  const client = createTritonClient({ url: '127.0.0.1:1' });
  try {
    return client.grpc.engine;
  } finally {
    await client.close();
  }
}

function sizeLabel(bytes: number): string {
  return bytes >= MiB ? `${bytes / MiB}MiB` : `${bytes / KiB}KiB`;
}

function shortString(index: number, length: number): string {
  return `s${String(index).padStart(length - 1, '0')}`.slice(0, length);
}

/** The input tensor of `datatype` whose wire form is `bytes` long. */
function makeInput(datatype: Datatype, bytes: number): InputTensor {
  switch (datatype) {
    case 'FP32':
      return { name: 'INPUT0', datatype, data: Float32Array.from({ length: bytes / 4 }, (_, i) => i * 0.5) };
    case 'INT64':
      return { name: 'INPUT0', datatype, data: new BigInt64Array(bytes / 8).map((_, i) => BigInt(i)) };
    case 'FP16':
      // Float32Array values, converted to half precision by the encoder (the usual way in).
      return { name: 'INPUT0', datatype, data: Float32Array.from({ length: bytes / 2 }, (_, i) => i % 2048) };
    case 'BYTES':
      return {
        name: 'INPUT0',
        datatype,
        data: Array.from({ length: bytes / (BYTES_ELEMENT + 4) }, (_, i) => shortString(i, BYTES_ELEMENT)),
      };
  }
}

/** Nanoseconds per call: at least `minMs` of calls and at least 3 calls. */
function timeIt(fn: () => unknown, minMs: number): number {
  fn();
  let calls = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (calls < 3 || elapsed < minMs * 1e6) {
    fn();
    calls++;
    elapsed = Number(process.hrtime.bigint() - start);
  }
  return elapsed / calls;
}

/** The response message's bytes, as DATA frames of 16 KiB (the http2 default frame size). */
function frames(message: Uint8Array): Buffer[] {
  const out: Buffer[] = [];
  for (let offset = 0; offset < message.byteLength; offset += 16 * KiB) {
    out.push(Buffer.from(message.subarray(offset, Math.min(message.byteLength, offset + 16 * KiB))));
  }
  return out;
}

function readData(result: InferResult): unknown {
  return (result.outputs[0] as InferResult['outputs'][number]).data;
}

interface Arms {
  [arm: string]: () => unknown;
}

/** The arms of one (datatype, size) cell. */
async function cellArms(datatype: Datatype, bytes: number): Promise<{ arms: Arms; wireBytes: number }> {
  const { assembleMessage } = await import('../../packages/core/src/h2/grpc-frames.js');
  const input = makeInput(datatype, bytes);
  const request = buildInferRequest('identity', [input]);
  const tensor = request.inputs[0] as (typeof request.inputs)[number];
  const wireBytes = tensor.raw.byteLength;
  const src = Buffer.from(tensor.raw.buffer, tensor.raw.byteOffset, tensor.raw.byteLength);
  const dst = Buffer.allocUnsafe(wireBytes);
  const response = toBinary(
    ModelInferResponseSchema,
    create(ModelInferResponseSchema, {
      modelName: 'identity',
      modelVersion: '1',
      outputs: [{ name: 'OUTPUT0', datatype, shape: tensor.shape.map(BigInt) }],
      rawOutputContents: [tensor.raw],
    }),
  );
  // grpc-js hands a unary response over as one Buffer of its own (Buffer.concat of the frames).
  const asGrpcJs = Buffer.from(response);
  const asFrames = frames(response);
  const asH2 = assembleMessage(asFrames, response.byteLength);
  const decode = (message: Uint8Array) =>
    readData(new InferResult(fromModelInferResponse(parseModelInferResponse(message))));
  return {
    wireBytes,
    arms: {
      memcpy: () => src.copy(dst),
      encode: () => {
        const built = buildInferRequest('identity', [input]);
        return joinChunks(encodeInferRequest(built, [built.inputs[0]?.raw as Uint8Array]));
      },
      encode_chunks: () => {
        const built = buildInferRequest('identity', [input]);
        return encodeInferRequest(built, [built.inputs[0]?.raw as Uint8Array], undefined, 5);
      },
      encode_before: () => {
        const built = buildInferRequest('identity', [input]);
        return serializeInferRequest(toModelInferRequest(built), [built.inputs[0]?.raw as Uint8Array]);
      },
      encode_runtime: () => {
        const built = buildInferRequest('identity', [input]);
        const message = toModelInferRequest(built);
        message.rawInputContents = [built.inputs[0]?.raw as Uint8Array];
        return toBinary(ModelInferRequestSchema, message);
      },
      decode_grpcjs: () => decode(asGrpcJs),
      decode_h2: () => decode(asH2),
      receive_grpcjs: () => decode(Buffer.concat(asFrames)),
      receive_h2: () => decode(assembleMessage(asFrames, response.byteLength)),
    },
  };
}

function pythonBytes(count: number, length: number, repeats: number): number {
  const run = spawnSync(PYTHON, [SCRIPT, String(count), String(length), String(repeats)], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (run.status !== 0) throw new Error(`tritonclient serialize failed: ${run.stderr || run.error?.message}`);
  return (JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { medianSeconds: number }).medianSeconds;
}

export async function run(): Promise<void> {
  const rounds = Number(flag('rounds') ?? 3);
  const engine =
    flag('engine') === 'grpc-js' ? 'grpc-js' : flag('engine') === 'http2' ? 'http2' : await defaultEngine();
  const maxBytes = Number(flag('max-mib') ?? 64) * MiB;
  const withPython = !process.argv.includes('--no-python') && existsSync(PYTHON);
  const sizes = [KiB, 64 * KiB, MiB, 16 * MiB, 64 * MiB].filter((size) => size <= maxBytes);
  const cases: BenchCase[] = [];
  const ratios: Record<string, number> = {};
  for (const datatype of DATATYPES) {
    for (const size of sizes) {
      // The wire size of the cell: BYTES rounds down to whole 64-byte elements.
      const target = datatype === 'BYTES' ? size - (size % (BYTES_ELEMENT + 4)) : size;
      const { arms, wireBytes } = await cellArms(datatype, target);
      const names = Object.keys(arms);
      const runs = new Map<string, number[]>();
      const minMs = size >= 16 * MiB ? 300 : 100;
      for (let roundIndex = 0; roundIndex < rounds; roundIndex++) {
        for (let index = 0; index < names.length; index++) {
          const arm = names[(index + roundIndex) % names.length] as string;
          runs.set(arm, [...(runs.get(arm) ?? []), timeIt(arms[arm] as () => unknown, minMs)]);
        }
      }
      const label = sizeLabel(size);
      const memcpy = median(runs.get('memcpy') ?? []);
      for (const arm of names) {
        const ns = median(runs.get(arm) ?? []);
        cases.push({
          name: `${datatype} ${label} ${arm}`,
          arm,
          load: `${datatype} ${label}`,
          extra: {
            nsPerCall: round(ns, 0),
            wireBytes,
            gibPerSec: round(wireBytes / ns, 3),
            vsMemcpy: round(memcpy / ns, 3),
            rounds: runs.get(arm),
          },
        });
      }
      const key = datatype.toLowerCase();
      if (size === MiB || size === 64 * MiB) {
        const vs = (arm: string) => memcpy / median(runs.get(arm) ?? []);
        ratios[`${key}_encode_vs_memcpy_${label}`] = vs(engine === 'http2' ? 'encode_chunks' : 'encode');
        ratios[`${key}_decode_vs_memcpy_${label}`] = vs(engine === 'http2' ? 'decode_h2' : 'decode_grpcjs');
        ratios[`${key}_receive_vs_memcpy_${label}`] = vs(
          engine === 'http2' ? 'receive_h2' : 'receive_grpcjs',
        );
      }
      console.log(
        `${datatype} ${label}: ${names.map((arm) => `${arm} ${round(memcpy / median(runs.get(arm) ?? []), 2)}`).join(', ')} (× memcpy speed)`,
      );
    }
  }

  // BYTES encode of 10k short strings against tritonclient, rounds alternating.
  const count = 10_000;
  const length = 12;
  const strings = Array.from({ length: count }, (_, i) => shortString(i, length));
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let roundIndex = 0; roundIndex < rounds; roundIndex++) {
    ours.push(
      timeIt(() => buildInferRequest('m', [{ name: 'S', datatype: 'BYTES', data: strings }]), 200) / 1e9,
    );
    if (withPython) theirs.push(pythonBytes(count, length, 50));
  }
  cases.push({
    name: 'BYTES encode 10k x 12 chars core',
    arm: 'core',
    load: 'bytes10k',
    extra: { msPerCall: round(median(ours) * 1000, 3), rounds: ours },
  });
  if (withPython) {
    cases.push({
      name: 'BYTES encode 10k x 12 chars tritonclient',
      arm: 'tritonclient',
      load: 'bytes10k',
      extra: { msPerCall: round(median(theirs) * 1000, 3), rounds: theirs },
    });
    ratios.bytes_encode_vs_tritonclient_10k = median(theirs) / median(ours);
  }

  report({
    suite: 'codec',
    versions: { '@infergate/core': packageVersion('core'), engine },
    cases,
    ratios,
    targets: {
      fp32_encode_vs_memcpy_1MiB: '>= 0.5',
      fp32_decode_vs_memcpy_1MiB: '>= 0.5',
      fp32_encode_vs_memcpy_64MiB: '>= 0.5',
      fp32_decode_vs_memcpy_64MiB: '>= 0.5',
      bytes_encode_vs_tritonclient_10k: '>= 1',
    },
    command: `pnpm bench codec --rounds ${rounds}${flag('max-mib') ? ` --max-mib ${flag('max-mib')}` : ''}${flag('engine') ? ` --engine ${flag('engine')}` : ''}`,
  });
}

// Outputs decoded into memory the caller gives (`RequestedOutput.into`, decision 0026): the checks
// made before a request is sent, and the copy of each bound output's bytes into its memory once the
// answer is in. Every transport calls `writeOutputsInto` where its answer is built (the http2 engine
// before its receive memory goes back to the pool); the client calls it again for transports that do
// not, which costs nothing when the bytes are already in place.
import { elementSize } from '../datatype.js';
import { abortError, ErrorCode, InfergateError, type InfergateErrorOptions } from '../errors.js';
import type { EncodedTensor } from '../tensor.js';
import type { InferRequest, InferResponse, RequestedOutput } from '../transport.js';

function invalid(message: string, model?: string): InfergateError {
  return new InfergateError(ErrorCode.InvalidArgument, message, model === undefined ? {} : { model });
}

/** Memory that any fixed-size datatype may be written into (when aligned for it). */
export function isByteView(view: ArrayBufferView): boolean {
  return view instanceof Uint8Array || view instanceof DataView || view instanceof Uint8ClampedArray;
}

/** True when some requested output names memory of the caller's. */
export function hasOutputsInto(outputs: readonly RequestedOutput[] | undefined): boolean {
  if (outputs === undefined) return false;
  for (const output of outputs) if (output.into !== undefined) return true;
  return false;
}

/**
 * True when the answer can carry nothing the caller will view in the message itself: outputs are
 * named, each is bound to `into` or to shared memory, and at least one to `into`. Such an answer's
 * receive memory is free again once `writeOutputsInto` returned.
 */
export function answerGoesIntoCallerMemory(request: InferRequest): boolean {
  const { outputs } = request;
  if (outputs === undefined || outputs.length === 0) return false;
  let into = false;
  for (const output of outputs) {
    if (output.into !== undefined) into = true;
    else if (output.sharedMemory === undefined) return false;
  }
  return into;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  if (value instanceof ArrayBuffer) return 'an ArrayBuffer';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/**
 * The checks on `into` that need no answer, made before anything is sent: a view (not an
 * ArrayBuffer, not an array), not with shared memory or classification, not on a stream, and no two
 * outputs' memory overlapping.
 */
export function checkOutputsInto(outputs: readonly RequestedOutput[], stream = false): void {
  const bound: RequestedOutput[] = [];
  for (const output of outputs) {
    const { into } = output;
    if (into === undefined) continue;
    const what = `output '${output.name}'`;
    if (stream) {
      throw invalid(
        `${what}: \`into\` is for unary calls; a stream's answers would overwrite each other's memory (leave \`into\` off, and copy each answer's data where it belongs)`,
      );
    }
    if (!ArrayBuffer.isView(into)) {
      throw invalid(`${what}: \`into\` must be a typed array, Buffer or DataView, got ${describe(into)}`);
    }
    if (output.sharedMemory !== undefined)
      throw invalid(`${what}: give either \`into\` or \`sharedMemory\`, not both`);
    if (output.classCount !== undefined) {
      throw invalid(
        `${what}: a classification output (classCount) is BYTES, of variable length: \`into\` cannot hold it`,
      );
    }
    for (const other of bound) {
      const memory = other.into as ArrayBufferView;
      if (
        memory.buffer === into.buffer &&
        memory.byteLength > 0 &&
        into.byteLength > 0 &&
        memory.byteOffset < into.byteOffset + into.byteLength &&
        into.byteOffset < memory.byteOffset + memory.byteLength
      ) {
        throw invalid(
          `outputs '${other.name}' and '${output.name}': their \`into\` memory overlaps (bytes ${memory.byteOffset}–${memory.byteOffset + memory.byteLength} and ${into.byteOffset}–${into.byteOffset + into.byteLength} of one buffer); give each output memory of its own`,
        );
      }
    }
    bound.push(output);
  }
}

/** The typed array that views each fixed-size datatype in `into` (FP16/BF16: their bit patterns). */
export const intoArray = {
  BOOL: Uint8Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  UINT64: BigUint64Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  INT64: BigInt64Array,
  FP16: Uint16Array,
  BF16: Uint16Array,
  FP32: Float32Array,
  FP64: Float64Array,
} as const;

/** Throws the typed error for an output that `into` cannot hold or view; writes nothing. */
function checkInto(output: EncodedTensor, into: ArrayBufferView, model: string): void {
  const { name, datatype, raw, shape } = output;
  const what = `output '${name}'`;
  const afterRun = 'the server ran the request';
  if (datatype === 'BYTES') {
    throw invalid(
      `${what} is BYTES, of variable length: \`into\` cannot hold it (nothing was written; ${afterRun}); leave \`into\` off for this output`,
      model,
    );
  }
  const View = intoArray[datatype];
  const size = elementSize(datatype);
  if (!isByteView(into) && !(into instanceof View)) {
    throw invalid(
      `${what} is ${datatype}, which \`into\` (${describe(into)}) cannot view: give a ${View.name}, a Uint8Array, Buffer or DataView (nothing was written; ${afterRun})`,
      model,
    );
  }
  if (into.byteOffset % size !== 0) {
    throw invalid(
      `${what} is ${datatype} (${size}-byte elements), but \`into\` starts at byte offset ${into.byteOffset} of its buffer, not a multiple of ${size}: its data could not be viewed there (nothing was written; ${afterRun})`,
      model,
    );
  }
  if (raw.byteLength > into.byteLength) {
    throw new InfergateError(
      ErrorCode.OutOfRange,
      `${what} is ${raw.byteLength} bytes (${datatype} [${shape.join(', ')}]), \`into\` holds ${into.byteLength}: nothing was written; ${afterRun}`,
      {
        model,
        details: { output: name, outputBytes: raw.byteLength, intoBytes: into.byteLength },
      },
    );
  }
}

/** Copies a checked output's bytes into `into`; returns them as a view of `into`. */
function copyInto(output: EncodedTensor, into: ArrayBufferView): Uint8Array {
  const { raw } = output;
  if (raw.buffer === into.buffer && raw.byteOffset === into.byteOffset) return raw;
  const target = new Uint8Array(into.buffer, into.byteOffset, raw.byteLength);
  target.set(raw);
  return target;
}

/** `into` of the requested output called `name`, if any. */
function intoOf(outputs: readonly RequestedOutput[], name: string): ArrayBufferView | undefined {
  for (const output of outputs) if (output.name === name) return output.into;
  return undefined;
}

/** How `writeOutputsInto` treats the rest of the answer. */
export interface WriteOutputsIntoOptions {
  /**
   * Give every output not bound to `into` bytes of its own: for a message whose memory is about to
   * be reused (a server that sent an output nobody asked for).
   */
  copyOthers?: boolean;
  /**
   * The call's signal: once it is aborted (a hedging router's losing attempt, a caller gone), the
   * answer writes nothing into the caller's memory, which the caller may be using again, and the
   * call fails CANCELLED (or with the signal's reason) instead.
   */
  signal?: AbortSignal | undefined;
}

/**
 * The response with each output the request bound to `into` written there (its `raw` then a view of
 * the caller's memory). Throws a typed error naming the output when one does not fit or cannot be
 * viewed in its `into`, before anything is written into any of them.
 */
export function writeOutputsInto(
  request: InferRequest,
  response: InferResponse,
  options: WriteOutputsIntoOptions = {},
): InferResponse {
  const requested = request.outputs;
  const { copyOthers = false, signal } = options;
  const binds = requested !== undefined && hasOutputsInto(requested);
  if (requested === undefined || (!copyOthers && !binds)) return response;
  if (binds && signal?.aborted) throw abortError(signal, { model: request.model });
  // Every bound output is checked before the first is written: a failing call leaves all of the
  // caller's memory as it was.
  const outputs = response.outputs;
  // A bound output left out would leave the caller reading its memory's old bytes as the answer.
  if (binds) {
    for (const wanted of requested) {
      if (wanted.into === undefined || outputs.some((output) => output.name === wanted.name)) continue;
      throw new InfergateError(
        ErrorCode.DataLoss,
        `the server left out requested output '${wanted.name}' (it sent ${outputs.map((output) => `'${output.name}'`).join(', ') || 'none'}); nothing was written into \`into\``,
        { model: request.model },
      );
    }
  }
  for (let index = 0; index < outputs.length; index++) {
    const output = outputs[index] as EncodedTensor;
    const into = intoOf(requested, output.name);
    if (into === undefined) continue;
    checkInto(output, into, request.model);
    // A second copy would land on the first in the one `into`, under the first's shape.
    for (let before = 0; before < index; before++) {
      if ((outputs[before] as EncodedTensor).name === output.name) {
        throw new InfergateError(
          ErrorCode.DataLoss,
          `the server sent output '${output.name}' twice; its \`into\` holds one (nothing was written; the server ran the request)`,
          { model: request.model },
        );
      }
    }
  }
  const written = outputs.map((output): EncodedTensor => {
    const into = intoOf(requested, output.name);
    if (into !== undefined) return { ...output, raw: copyInto(output, into) };
    if (!copyOthers) return output;
    // Even an empty output gets bytes of its own: an empty view's `buffer` is the message's memory.
    return {
      ...output,
      raw: output.raw.byteLength === 0 ? new Uint8Array(0) : Uint8Array.prototype.slice.call(output.raw),
    };
  });
  return { ...response, outputs: written };
}

/**
 * `writeOutputsInto` for a transport: its failures carry where the call went (`endpoint`,
 * `requestId`), as the call's other failures do.
 */
export function writeOutputsIntoAt(
  request: InferRequest,
  response: InferResponse,
  options: WriteOutputsIntoOptions,
  context: InfergateErrorOptions,
): InferResponse {
  try {
    return writeOutputsInto(request, response, options);
  } catch (error) {
    if (!(error instanceof InfergateError)) throw error;
    const placed: InfergateErrorOptions = { ...context, retryable: error.retryable };
    if (error.model !== undefined) placed.model = error.model;
    if (error.details !== undefined) placed.details = error.details;
    if (error.cause !== undefined) placed.cause = error.cause;
    throw new InfergateError(error.code, error.rawMessage, placed);
  }
}

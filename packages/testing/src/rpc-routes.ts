import { create, type DescMethod, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { HandlerTable, RpcContext, UnaryMethodKey } from './handler-table.js';
import { serializeInferResponse, serializeInferResponseChunks } from './infer-response.js';
import { CallContext } from './internal/call-context.js';
import { status } from './internal/grpc-status.js';
import { GRPCInferenceService, type ModelInferResponse } from './internal/proto.js';
import { checkAccess } from './restriction.js';
import { RpcError, toRpcError } from './rpc-error.js';
import type { ServerState } from './server-state.js';

type AnyHandler = (request: unknown, context: RpcContext) => unknown;

/** The wire path of ModelStreamInfer, the service's one streaming RPC. */
export const STREAM_INFER_PATH = `/${GRPCInferenceService.typeName}/ModelStreamInfer`;

/** One unary RPC of the service, whatever transport serves it. */
export interface UnaryRoute {
  /** `/inference.GRPCInferenceService/ModelInfer`. */
  readonly path: string;
  /** `ModelInfer`: the name calls are recorded under. */
  readonly name: string;
  readonly key: UnaryMethodKey;
  readonly method: DescMethod;
  decode(bytes: Uint8Array): unknown;
  encode(message: unknown): Buffer;
  /**
   * The response as one gRPC message, in chunks to write in order: 5 bytes of prefix, then the
   * message (a large tensor is a chunk of its own, its own memory).
   */
  encodeFramed(message: unknown): Buffer[];
  readonly handler: AnyHandler;
}

/** One unary call in progress: its answer, and how the transport reports a cancellation. */
export interface UnaryRun {
  /** The response message; rejects with an `RpcError`. */
  readonly result: Promise<unknown>;
  /** The client cancelled or the deadline passed: aborts the handler's signal and counts it. */
  cancel(): void;
  /**
   * Once `result` has resolved: undefined if the answer may go at once, else when it may (its
   * execution's end; rejects with the call's error if the execution never ran). Only for runs
   * started with `holdsAnswers`.
   */
  heldUntil(): Promise<void> | undefined;
}

/** RPCs whose request field `name` names a model (the rest name a region, or nothing). */
const modelNamedBy: Partial<Record<UnaryMethodKey, 'name' | 'modelName'>> = {
  modelReady: 'name',
  modelMetadata: 'name',
  modelConfig: 'name',
  modelStatistics: 'name',
  modelInfer: 'modelName',
};

function modelOf(key: UnaryMethodKey, request: unknown): string | undefined {
  const field = modelNamedBy[key];
  if (field === undefined) return undefined;
  const value = (request as Record<string, unknown>)[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function framedEncoderFor(key: UnaryMethodKey, method: DescMethod): (value: unknown) => Buffer[] {
  const frame = (chunks: Buffer[]) => {
    const first = chunks[0] as Buffer;
    let length = -5;
    for (const chunk of chunks) length += chunk.byteLength;
    first[0] = 0;
    first.writeUInt32BE(length, 1);
    return chunks;
  };
  if (key === 'modelInfer')
    return (value) => frame(serializeInferResponseChunks(value as ModelInferResponse, 5));
  return (value) => {
    const bytes = toBinary(method.output, value as never);
    const framed = Buffer.allocUnsafe(bytes.byteLength + 5);
    framed.set(bytes, 5);
    return frame([framed]);
  };
}

function encoderFor(key: UnaryMethodKey, method: DescMethod): (value: unknown) => Buffer {
  // Inference responses append their tensor bytes by hand (one copy); everything else is small.
  if (key === 'modelInfer') return (value) => serializeInferResponse(value as ModelInferResponse);
  return (value) => {
    const bytes = toBinary(method.output, value as never);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

/**
 * Every unary RPC of the service, by wire path. All are routed, so calls to those without a
 * handler are recorded and answered UNIMPLEMENTED.
 */
export function unaryRoutes(handlers: HandlerTable): Map<string, UnaryRoute> {
  const routes = new Map<string, UnaryRoute>();
  for (const method of GRPCInferenceService.methods) {
    if (method.methodKind !== 'unary') continue;
    const key = method.localName as UnaryMethodKey;
    const handler =
      (handlers[key] as AnyHandler | undefined) ??
      (() => {
        throw new RpcError(status.UNIMPLEMENTED, `infergate-testing does not implement ${method.name} yet`);
      });
    const path = `/${GRPCInferenceService.typeName}/${method.name}`;
    routes.set(path, {
      path,
      name: method.name,
      key,
      method,
      decode: (bytes) => fromBinary(method.input, bytes),
      encode: encoderFor(key, method),
      encodeFramed: framedEncoderFor(key, method),
      handler,
    });
  }
  return routes;
}

/**
 * Runs one unary call: records it, checks access and extensions, waits at the gate (`pause()`),
 * runs the handler with a signal that `cancel()` or `kill()` aborts. `holdsAnswers`: the transport
 * can hold a built answer until `heldUntil()` settles, so a model may hand its outputs over before
 * its execution ends (decision 0023); the call stays in flight (cancellable, counted) until then.
 */
export function startUnary(
  state: ServerState,
  route: UnaryRoute,
  request: unknown,
  metadata: Readonly<Record<string, string>>,
  holdsAnswers = false,
): UnaryRun {
  const context = new CallContext(metadata);
  context.earlyAnswers = holdsAnswers;
  const model = modelOf(route.key, request);
  state.calls.record({ method: route.name, model, metadata, time: Date.now() });
  let answered = false;
  const cancel = () => {
    if (answered) return;
    if (route.key === 'modelInfer' && model !== undefined) state.stats.of(model).cancellations += 1;
    context.abort(new RpcError(status.CANCELLED, 'the client cancelled the call or its deadline passed'));
  };
  const settle = () => {
    answered = true;
    state.inFlight.delete(context);
  };
  const run = async (): Promise<unknown> => {
    state.inFlight.add(context);
    let held = false;
    try {
      checkAccess(route.name, metadata, state.restrictions, state.identity.extensions);
      if (!state.gate.isOpen) await state.gate.wait(context.signal);
      const result = await route.handler(request, context);
      const message = create(route.method.output, result as never);
      const until = context.answerAfter;
      if (until !== undefined) {
        // The answer waits for its execution's end: until then the call is in flight.
        held = true;
        until.then(settle, settle);
      }
      return message;
    } catch (error) {
      throw toRpcError(error);
    } finally {
      if (!held) settle();
    }
  };
  return { result: run(), cancel, heldUntil: () => context.answerAfter };
}

import { create, type DescMethod, fromBinary, toBinary } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { metadataToRecord } from './call-recorder.js';
import type { HandlerTable, RpcContext, UnaryMethodKey } from './handler-table.js';
import { serializeInferResponse } from './infer-response.js';
import { GRPCInferenceService, type ModelInferResponse } from './internal/proto.js';
import { checkAccess } from './restriction.js';
import { RpcError, toRpcError } from './rpc-error.js';
import type { ServerState } from './server-state.js';
import { handleModelStreamInfer, streamInferDefinition } from './stream-handler.js';

type AnyHandler = (request: unknown, context: RpcContext) => unknown;

export interface GrpcService {
  definition: grpc.ServiceDefinition;
  implementation: grpc.UntypedServiceImplementation;
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

function serializerFor(key: UnaryMethodKey, method: DescMethod): (value: unknown) => Buffer {
  // Inference responses append their tensor bytes by hand (one copy); everything else is small.
  if (key === 'modelInfer') return (value) => serializeInferResponse(value as ModelInferResponse);
  return (value) => Buffer.from(toBinary(method.output, value as never));
}

/**
 * Turns the handler table into a grpc-js service. Every unary RPC is registered, so calls to those
 * without a handler are recorded and answered UNIMPLEMENTED; ModelStreamInfer is the one streaming RPC.
 */
export function createGrpcService(state: ServerState, handlers: HandlerTable): GrpcService {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  definition.ModelStreamInfer = streamInferDefinition as grpc.MethodDefinition<unknown, unknown>;
  implementation.ModelStreamInfer = ((call: Parameters<typeof handleModelStreamInfer>[1]) =>
    handleModelStreamInfer(state, call)) as grpc.handleBidiStreamingCall<unknown, unknown>;
  for (const method of GRPCInferenceService.methods) {
    if (method.methodKind !== 'unary') continue;
    const key = method.localName as UnaryMethodKey;
    definition[method.name] = {
      path: `/${GRPCInferenceService.typeName}/${method.name}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: unknown) => Buffer.from(toBinary(method.input, value as never)),
      requestDeserialize: (bytes: Buffer) => fromBinary(method.input, bytes),
      responseSerialize: serializerFor(key, method),
      responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
    };
    const handler = handlers[key] as AnyHandler | undefined;
    const run: AnyHandler =
      handler ??
      (() => {
        throw new RpcError(
          grpc.status.UNIMPLEMENTED,
          `infergate-testing does not implement ${method.name} yet`,
        );
      });
    const unary: grpc.handleUnaryCall<unknown, unknown> = (call, callback) => {
      void dispatch(state, method, key, run, call, callback);
    };
    implementation[method.name] = unary;
  }
  return { definition, implementation };
}

async function dispatch(
  state: ServerState,
  method: DescMethod,
  key: UnaryMethodKey,
  handler: AnyHandler,
  call: grpc.ServerUnaryCall<unknown, unknown>,
  callback: grpc.sendUnaryData<unknown>,
): Promise<void> {
  const controller = new AbortController();
  const metadata = metadataToRecord(call.metadata);
  const model = modelOf(key, call.request);
  state.calls.record({ method: method.name, model, metadata, time: Date.now() });
  state.inFlight.add(controller);
  let answered = false;
  const onCancelled = () => {
    if (answered) return;
    if (key === 'modelInfer' && model !== undefined) state.stats.of(model).cancellations += 1;
    controller.abort(
      new RpcError(grpc.status.CANCELLED, 'the client cancelled the call or its deadline passed'),
    );
  };
  call.once('cancelled', onCancelled);
  if (call.cancelled) onCancelled();
  try {
    checkAccess(method.name, metadata, state.restrictions, state.identity.extensions);
    if (!state.gate.isOpen) await state.gate.wait(controller.signal);
    const result = await handler(call.request, { metadata, signal: controller.signal });
    answered = true;
    callback(null, create(method.output, result as never));
  } catch (error) {
    answered = true;
    const failure = toRpcError(error);
    callback({ code: failure.code, details: failure.message });
  } finally {
    state.inFlight.delete(controller);
    call.removeListener('cancelled', onCancelled);
  }
}

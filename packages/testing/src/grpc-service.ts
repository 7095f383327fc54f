import { fromBinary, toBinary } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import { metadataToRecord } from './call-recorder.js';
import type { HandlerTable } from './handler-table.js';
import {
  type ModelInferRequest,
  ModelInferRequestSchema,
  type ModelStreamInferResponse,
  ModelStreamInferResponseSchema,
} from './internal/proto.js';
import type { RpcError } from './rpc-error.js';
import { STREAM_INFER_PATH, startUnary, type UnaryRoute, unaryRoutes } from './rpc-routes.js';
import type { ServerState } from './server-state.js';
import { handleModelStreamInfer } from './stream-handler.js';

export interface GrpcService {
  definition: grpc.ServiceDefinition;
  implementation: grpc.UntypedServiceImplementation;
}

type StreamCall = grpc.ServerDuplexStream<ModelInferRequest, ModelStreamInferResponse>;

const streamInferDefinition: grpc.MethodDefinition<ModelInferRequest, ModelStreamInferResponse> = {
  path: STREAM_INFER_PATH,
  requestStream: true,
  responseStream: true,
  requestSerialize: (value) => Buffer.from(toBinary(ModelInferRequestSchema, value)),
  requestDeserialize: (bytes) => fromBinary(ModelInferRequestSchema, bytes),
  responseSerialize: (value) => Buffer.from(toBinary(ModelStreamInferResponseSchema, value)),
  responseDeserialize: (bytes) => fromBinary(ModelStreamInferResponseSchema, bytes),
};

/** ModelStreamInfer over a grpc-js duplex call. */
function serveStream(state: ServerState, call: StreamCall): void {
  const events = handleModelStreamInfer(state, {
    metadata: metadataToRecord(call.metadata),
    write: (message) => call.write(message),
    end: () => call.end(),
    fail: (code, details) => call.emit('error', { code, details }),
  });
  call.on('cancelled', () => events.cancel());
  call.on('error', () => events.cancel());
  call.on('data', (message: ModelInferRequest) => events.message(message));
  call.on('end', () => events.halfClose());
}

function serveUnary(
  state: ServerState,
  route: UnaryRoute,
  call: grpc.ServerUnaryCall<unknown, unknown>,
  callback: grpc.sendUnaryData<unknown>,
): void {
  const run = startUnary(state, route, call.request, metadataToRecord(call.metadata));
  const onCancelled = () => run.cancel();
  call.once('cancelled', onCancelled);
  if (call.cancelled) onCancelled();
  run.result.then(
    (response) => {
      call.removeListener('cancelled', onCancelled);
      callback(null, response);
    },
    (failure: RpcError) => {
      call.removeListener('cancelled', onCancelled);
      callback({ code: failure.code, details: failure.message });
    },
  );
}

/**
 * Turns the handler table into a grpc-js service (the `grpc-js` transport). Every unary RPC is
 * registered, so calls to those without a handler are recorded and answered UNIMPLEMENTED;
 * ModelStreamInfer is the one streaming RPC.
 */
export function createGrpcService(state: ServerState, handlers: HandlerTable): GrpcService {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  definition.ModelStreamInfer = streamInferDefinition as grpc.MethodDefinition<unknown, unknown>;
  implementation.ModelStreamInfer = ((call: StreamCall) =>
    serveStream(state, call)) as grpc.handleBidiStreamingCall<unknown, unknown>;
  for (const route of unaryRoutes(handlers).values()) {
    const { method } = route;
    definition[route.name] = {
      path: route.path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: unknown) => Buffer.from(toBinary(method.input, value as never)),
      requestDeserialize: (bytes: Buffer) => route.decode(bytes),
      responseSerialize: route.encode,
      responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
    };
    const unary: grpc.handleUnaryCall<unknown, unknown> = (call, callback) =>
      serveUnary(state, route, call, callback);
    implementation[route.name] = unary;
  }
  return { definition, implementation };
}

import type { MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import type { GRPCInferenceService } from './internal/proto.js';

type Methods = typeof GRPCInferenceService.method;

/** The service's unary RPCs by their generated (lowerCamel) keys. */
export type UnaryMethodKey = {
  [K in keyof Methods]: Methods[K]['methodKind'] extends 'unary' ? K : never;
}[keyof Methods];

export interface RpcContext {
  /** Request metadata as plain strings. */
  readonly metadata: Readonly<Record<string, string>>;
  /** Aborts when the client cancels, the deadline passes or the server is killed. */
  readonly signal: AbortSignal;
}

export type UnaryHandler<K extends UnaryMethodKey> = (
  request: MessageShape<Methods[K]['input']>,
  context: RpcContext,
) => Promise<MessageInitShape<Methods[K]['output']>> | MessageInitShape<Methods[K]['output']>;

/**
 * One entry per implemented RPC. An RPC without an entry answers UNIMPLEMENTED, so adding one is
 * adding a key here (and, for a streaming RPC, a case in grpc-service.ts).
 */
export type HandlerTable = { [K in UnaryMethodKey]?: UnaryHandler<K> };

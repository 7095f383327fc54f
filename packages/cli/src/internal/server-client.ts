import type { ModelOptions, TritonClient } from '@infergate/core';
import type { HttpClient } from '@infergate/core/http';
import type { ModelConfig } from '@infergate/core/proto';
import { modelConfigFromJson } from '@infergate/model-config';

/** The calls both clients make with the same signatures and results. */
type SharedCalls = Pick<
  TritonClient,
  | 'serverLive'
  | 'serverReady'
  | 'serverMetadata'
  | 'modelReady'
  | 'modelMetadata'
  | 'infer'
  | 'repositoryIndex'
  | 'loadModel'
  | 'unloadModel'
  | 'modelStatistics'
  | 'close'
>;

/**
 * What a server-calling command sees: the same calls over gRPC or HTTP. The model configuration is
 * the typed `ModelConfig` either way, so `config --format pbtxt` prints the same text.
 */
export interface ServerClient extends SharedCalls {
  readonly protocol: 'grpc' | 'http';
  /** Where the client connects, for messages. */
  readonly address: string;
  modelConfig(model: string, options?: ModelOptions): Promise<ModelConfig>;
}

function shared(client: SharedCalls): SharedCalls {
  return {
    serverLive: (options) => client.serverLive(options),
    serverReady: (options) => client.serverReady(options),
    serverMetadata: (options) => client.serverMetadata(options),
    modelReady: (model, options) => client.modelReady(model, options),
    modelMetadata: (model, options) => client.modelMetadata(model, options),
    infer: (model, inputs, options) => client.infer(model, inputs, options),
    repositoryIndex: (options) => client.repositoryIndex(options),
    loadModel: (model, options) => client.loadModel(model, options),
    unloadModel: (model, options) => client.unloadModel(model, options),
    modelStatistics: (model, options) => client.modelStatistics(model, options),
    close: () => client.close(),
  };
}

export function grpcServerClient(client: TritonClient): ServerClient {
  return {
    ...shared(client),
    protocol: 'grpc',
    address: client.grpc.address,
    modelConfig: (model, options) => client.modelConfig(model, options),
  };
}

export function httpServerClient(client: HttpClient): ServerClient {
  return {
    ...shared(client),
    protocol: 'http',
    address: client.http.address,
    // The HTTP endpoint answers with the JSON form of the same message (pbtxt field names). Fields
    // this version's schema lacks (a newer server) are skipped rather than failing the command.
    modelConfig: async (model, options) =>
      modelConfigFromJson(await client.modelConfig(model, options), `the server's config of '${model}'`),
  };
}

import { create } from '@bufbuild/protobuf';
import { ErrorCode, InfergateError } from './errors.js';
import { Extension, withExtension } from './extension.js';
import { GRPCInferenceService, type ModelRepositoryParameter } from './gen/grpc_service_pb.js';
import type { GrpcTransport } from './grpc-transport.js';
import type { CallOptions } from './transport.js';

const service = GRPCInferenceService.method;

export interface RepositoryModel {
  name: string;
  version: string;
  /** e.g. READY, UNAVAILABLE, LOADING, UNLOADING */
  state: string;
  reason: string;
}

export interface RepositoryIndexOptions extends CallOptions {
  /** Only models that are ready. @default false */
  readyOnly?: boolean;
  repositoryName?: string;
}

export interface LoadModelOptions extends CallOptions {
  /** A model configuration to use instead of the one in the repository (object or JSON text). */
  config?: Record<string, unknown> | string;
  /** Files to use instead of the repository's, by path inside the model directory (e.g. "1/model.onnx"). */
  files?: Readonly<Record<string, Uint8Array | string>>;
  repositoryName?: string;
}

export interface UnloadModelOptions extends CallOptions {
  /** Also unload models that depend on this one (ensembles). @default false */
  unloadDependents?: boolean;
  repositoryName?: string;
}

type RepositoryParameterInit = { parameterChoice: ModelRepositoryParameter['parameterChoice'] };

export async function repositoryIndex(
  grpc: GrpcTransport,
  options: RepositoryIndexOptions = {},
): Promise<RepositoryModel[]> {
  const request = create(service.repositoryIndex.input, {
    repositoryName: options.repositoryName ?? '',
    ready: options.readyOnly === true,
  });
  const response = await withExtension(Extension.ModelRepository, 'repositoryIndex()', grpc.address, () =>
    grpc.unary(service.repositoryIndex, request, options),
  );
  return response.models.map(({ name, version, state, reason }) => ({ name, version, state, reason }));
}

export async function loadModel(
  grpc: GrpcTransport,
  model: string,
  options: LoadModelOptions = {},
): Promise<void> {
  const parameters: Record<string, RepositoryParameterInit> = {};
  if (options.config !== undefined) {
    const text = typeof options.config === 'string' ? options.config : JSON.stringify(options.config);
    parameters.config = { parameterChoice: { case: 'stringParam', value: text } };
  }
  for (const [path, content] of Object.entries(options.files ?? {})) {
    if (path === '' || path.startsWith('/') || path.split('/').includes('..')) {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `loadModel: file path '${path}' must be relative to the model`,
      );
    }
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    parameters[`file:${path}`] = { parameterChoice: { case: 'bytesParam', value: bytes } };
  }
  if (options.files !== undefined && Object.keys(options.files).length > 0 && options.config === undefined) {
    // Triton requires a config override whenever files are overridden.
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      'loadModel: file overrides need a config override too',
    );
  }
  const request = create(service.repositoryModelLoad.input, {
    repositoryName: options.repositoryName ?? '',
    modelName: model,
    parameters,
  });
  await withExtension(Extension.ModelRepository, 'loadModel()', grpc.address, () =>
    grpc.unary(service.repositoryModelLoad, request, options, { model }),
  );
}

export async function unloadModel(
  grpc: GrpcTransport,
  model: string,
  options: UnloadModelOptions = {},
): Promise<void> {
  const parameters: Record<string, RepositoryParameterInit> = {};
  if (options.unloadDependents)
    parameters.unload_dependents = { parameterChoice: { case: 'boolParam', value: true } };
  const request = create(service.repositoryModelUnload.input, {
    repositoryName: options.repositoryName ?? '',
    modelName: model,
    parameters,
  });
  await withExtension(Extension.ModelRepository, 'unloadModel()', grpc.address, () =>
    grpc.unary(service.repositoryModelUnload, request, options, { model }),
  );
}

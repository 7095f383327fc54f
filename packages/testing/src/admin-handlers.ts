import type { HandlerTable } from './handler-table.js';
import type { StatDuration, VersionStats } from './inference-stats.js';
import { status } from './internal/grpc-status.js';
import type { ModelRepositoryParameter } from './internal/proto.js';
import type { LoadRecord } from './model-registry.js';
import { invalidArgument, notFound, RpcError } from './rpc-error.js';
import type { ServerState } from './server-state.js';

const duration = (value: StatDuration) => ({ count: BigInt(value.count), ns: value.ns });

function toProto(stats: VersionStats) {
  return {
    name: stats.name,
    version: stats.version,
    lastInference: BigInt(stats.lastInference),
    inferenceCount: BigInt(stats.inferenceCount),
    executionCount: BigInt(stats.executionCount),
    inferenceStats: {
      success: duration(stats.success),
      fail: duration(stats.fail),
      queue: duration(stats.queue),
      computeInput: duration(stats.computeInput),
      computeInfer: duration(stats.computeInfer),
      computeOutput: duration(stats.computeOutput),
      cacheHit: { count: 0n, ns: 0n },
      cacheMiss: { count: 0n, ns: 0n },
    },
    batchStats: [...stats.batchStats.entries()]
      .sort(([a], [b]) => a - b)
      .map(([batchSize, batch]) => ({
        batchSize: BigInt(batchSize),
        computeInput: duration(batch.computeInput),
        computeInfer: duration(batch.computeInfer),
        computeOutput: duration(batch.computeOutput),
      })),
    responseStats: Object.fromEntries(
      [...stats.responseStats.entries()].map(([key, entry]) => [
        key,
        {
          computeInfer: duration(entry.computeInfer),
          computeOutput: duration(entry.computeOutput),
          success: duration(entry.success),
          fail: duration(entry.fail),
          emptyResponse: duration(entry.emptyResponse),
          cancel: duration(entry.cancel),
        },
      ]),
    ),
  };
}

function loadRecord(parameters: Readonly<Record<string, ModelRepositoryParameter>>): LoadRecord {
  const record: LoadRecord = { time: Date.now(), files: {} };
  for (const [key, parameter] of Object.entries(parameters)) {
    const choice = parameter.parameterChoice;
    if (key === 'config') {
      if (choice.case !== 'stringParam')
        throw invalidArgument("invalid value type for load parameter 'config', expected string_param.");
      try {
        record.config = JSON.parse(choice.value) as Record<string, unknown>;
      } catch (error) {
        throw invalidArgument(`failed to parse the 'config' load parameter: ${(error as Error).message}`);
      }
    } else if (key.startsWith('file:')) {
      if (choice.case !== 'bytesParam')
        throw invalidArgument(`invalid value type for load parameter '${key}', expected bytes_param.`);
      record.files[key.slice('file:'.length)] = choice.value;
    } else {
      throw invalidArgument(`unrecognized load parameter '${key}'.`);
    }
  }
  return record;
}

const noRepositoryName = (name: string) => {
  if (name !== '')
    throw new RpcError(status.UNIMPLEMENTED, "'repository_name' specification is not supported");
};

/** ModelStatistics, the model repository, trace and log settings, shared memory. */
export function createAdminHandlers(state: ServerState): HandlerTable {
  return {
    modelStatistics: (request) => {
      const names = request.name === '' ? state.models.names() : [request.name];
      if (request.name !== '') state.models.resolve(request.name, request.version);
      const modelStats = names.flatMap((name) => {
        const { model } = state.models.resolve(name);
        const versions = request.version === '' ? model.versions : [request.version];
        return versions.map((version) => toProto(state.inference.of(name, version)));
      });
      return { modelStats };
    },
    repositoryIndex: (request) => {
      noRepositoryName(request.repositoryName);
      return { models: state.models.index(request.ready) };
    },
    repositoryModelLoad: (request) => {
      noRepositoryName(request.repositoryName);
      state.models.load(request.modelName, loadRecord(request.parameters));
      return {};
    },
    repositoryModelUnload: (request) => {
      noRepositoryName(request.repositoryName);
      const flag = request.parameters.unload_dependents?.parameterChoice;
      if (flag !== undefined && flag.case !== 'boolParam') {
        throw invalidArgument("invalid value type for 'unload_dependents' parameter, expected bool_param.");
      }
      state.models.unload(request.modelName, flag?.value === true);
      return {};
    },
    traceSetting: (request) => {
      if (request.modelName !== '' && !state.models.isLoaded(request.modelName)) {
        throw invalidArgument(`Request for unknown model : ${request.modelName}`);
      }
      const updates = Object.fromEntries(
        Object.entries(request.settings).map(([name, setting]) => [name, setting.value]),
      );
      const settings =
        Object.keys(updates).length > 0
          ? state.trace.update(request.modelName, updates)
          : state.trace.get(request.modelName);
      return {
        settings: Object.fromEntries(Object.entries(settings).map(([name, value]) => [name, { value }])),
      };
    },
    logSettings: (request) => {
      const settings =
        Object.keys(request.settings).length > 0 ? state.log.update(request.settings) : state.log.get();
      return {
        settings: Object.fromEntries(
          Object.entries(settings).map(([name, value]) => [
            name,
            {
              parameterChoice:
                typeof value === 'boolean'
                  ? { case: 'boolParam' as const, value }
                  : typeof value === 'number'
                    ? { case: 'uint32Param' as const, value }
                    : { case: 'stringParam' as const, value },
            },
          ]),
        ),
      };
    },
    systemSharedMemoryRegister: (request) => {
      state.shm.register(request.name, request.key, Number(request.offset), Number(request.byteSize));
      return {};
    },
    systemSharedMemoryStatus: (request) => ({
      regions: Object.fromEntries(
        state.shm.status(request.name).map((region) => [
          region.name,
          {
            name: region.name,
            key: region.key,
            offset: BigInt(region.offset),
            byteSize: BigInt(region.byteSize),
          },
        ]),
      ),
    }),
    systemSharedMemoryUnregister: (request) => {
      state.shm.unregister(request.name);
      return {};
    },
    // A CPU-only Triton (built without TRITON_ENABLE_GPU), as in grpc_server.cc.
    cudaSharedMemoryRegister: (request) => {
      throw invalidArgument(
        `failed to register CUDA shared memory region: '${request.name}', GPUs not supported`,
      );
    },
    cudaSharedMemoryStatus: (request) => {
      if (request.name !== '') throw notFound(`Unable to find cuda shared memory region: '${request.name}'`);
      return { regions: {} };
    },
    cudaSharedMemoryUnregister: () => ({}),
  };
}

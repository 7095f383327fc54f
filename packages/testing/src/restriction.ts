import { Extension } from '@infergate/core';
import { status } from './internal/grpc-status.js';
import { RpcError } from './rpc-error.js';

/** Triton's `--grpc-restricted-protocol` groups (RestrictedCategory). */
export type ProtocolGroup =
  | 'health'
  | 'metadata'
  | 'inference'
  | 'shared-memory'
  | 'model-config'
  | 'model-repository'
  | 'statistics'
  | 'trace'
  | 'logging';

/**
 * `--grpc-restricted-protocol=<groups>:<header>=<value>`. As in Triton, the gRPC metadata key the
 * client must send is `triton-grpc-protocol-<header>` (lower case), with exactly `value`.
 */
export interface Restriction {
  groups: readonly ProtocolGroup[];
  header: string;
  value: string;
}

/** The TritonServer extension names, in Triton's order (core server.cc): core's `Extension` list. */
export const TRITON_EXTENSIONS: readonly string[] = Object.values(Extension);

export const GROUP_OF: Record<string, ProtocolGroup> = {
  ServerLive: 'health',
  ServerReady: 'health',
  ModelReady: 'health',
  ServerMetadata: 'metadata',
  ModelMetadata: 'metadata',
  ModelInfer: 'inference',
  ModelStreamInfer: 'inference',
  ModelConfig: 'model-config',
  ModelStatistics: 'statistics',
  RepositoryIndex: 'model-repository',
  RepositoryModelLoad: 'model-repository',
  RepositoryModelUnload: 'model-repository',
  SystemSharedMemoryStatus: 'shared-memory',
  SystemSharedMemoryRegister: 'shared-memory',
  SystemSharedMemoryUnregister: 'shared-memory',
  CudaSharedMemoryStatus: 'shared-memory',
  CudaSharedMemoryRegister: 'shared-memory',
  CudaSharedMemoryUnregister: 'shared-memory',
  TraceSetting: 'trace',
  LogSettings: 'logging',
};

/** The extension an RPC belongs to; a server that does not list it answers UNIMPLEMENTED. */
export const EXTENSION_OF: Record<string, string> = {
  ModelConfig: 'model_configuration',
  ModelStatistics: 'statistics',
  RepositoryIndex: 'model_repository',
  RepositoryModelLoad: 'model_repository',
  RepositoryModelUnload: 'model_repository',
  SystemSharedMemoryStatus: 'system_shared_memory',
  SystemSharedMemoryRegister: 'system_shared_memory',
  SystemSharedMemoryUnregister: 'system_shared_memory',
  CudaSharedMemoryStatus: 'cuda_shared_memory',
  CudaSharedMemoryRegister: 'cuda_shared_memory',
  CudaSharedMemoryUnregister: 'cuda_shared_memory',
  TraceSetting: 'trace',
  LogSettings: 'logging',
};

/** The wire metadata key of a restriction. */
export function restrictionKey(restriction: Restriction): string {
  return `triton-grpc-protocol-${restriction.header.toLowerCase()}`;
}

/**
 * Throws what Triton answers when `method` is restricted and the call lacks the header
 * (UNAVAILABLE "This protocol is restricted, expecting header '<key>'", grpc_server.cc), or
 * UNIMPLEMENTED when the server does not offer the method's extension.
 */
export function checkAccess(
  method: string,
  metadata: Readonly<Record<string, string>>,
  restrictions: readonly Restriction[],
  extensions: readonly string[],
): void {
  const extension = EXTENSION_OF[method];
  if (extension !== undefined && !extensions.includes(extension)) {
    throw new RpcError(
      status.UNIMPLEMENTED,
      `this server does not support the '${extension}' extension (${method})`,
    );
  }
  const group = GROUP_OF[method];
  for (const restriction of restrictions) {
    if (group === undefined || !restriction.groups.includes(group)) continue;
    const key = restrictionKey(restriction);
    if (metadata[key] !== restriction.value) {
      throw new RpcError(status.UNAVAILABLE, `This protocol is restricted, expecting header '${key}'`);
    }
  }
}

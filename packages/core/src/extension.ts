import { ErrorCode, InfergateError } from './errors.js';

/** Triton's protocol extensions, as ServerMetadata.extensions names them. */
export const Extension = {
  Classification: 'classification',
  Sequence: 'sequence',
  ModelRepository: 'model_repository',
  ModelRepositoryUnloadDependents: 'model_repository(unload_dependents)',
  SchedulePolicy: 'schedule_policy',
  ModelConfiguration: 'model_configuration',
  SystemSharedMemory: 'system_shared_memory',
  CudaSharedMemory: 'cuda_shared_memory',
  BinaryTensorData: 'binary_tensor_data',
  Parameters: 'parameters',
  Statistics: 'statistics',
  Trace: 'trace',
  Logging: 'logging',
} as const;

export type Extension = (typeof Extension)[keyof typeof Extension];

export function unsupportedExtension(
  extension: string,
  operation: string,
  endpoint: string,
  cause?: unknown,
) {
  return new InfergateError(
    ErrorCode.Unimplemented,
    `the server at ${endpoint} does not support the '${extension}' extension needed by ${operation}`,
    { endpoint, ...(cause !== undefined ? { cause } : {}), details: { extension } },
  );
}

/** How servers say "I have no such method" (grpc-js, MLServer, Triton builds without a feature). */
const MISSING_METHOD =
  /not implement|method not found|unimplemented method|does not support the '[^']+' extension/i;

/**
 * Whether a gRPC error means the method is missing. Only a missing method means a missing
 * extension: Triton also answers UNIMPLEMENTED for requests it refuses (e.g. setting trace_file
 * over the network), whose text must survive.
 */
export function isMissingMethod(error: unknown): boolean {
  return (
    error instanceof InfergateError &&
    error.code === ErrorCode.Unimplemented &&
    MISSING_METHOD.test(error.rawMessage)
  );
}

/**
 * Runs an extension's call; if the server answers that it has no such method (`isMissing`: a
 * KServe v2 server without the extension, such as MLServer for Triton-only calls), the error names
 * the missing extension. Any other error passes through unchanged.
 */
export async function withExtension<T>(
  extension: string,
  operation: string,
  endpoint: string,
  call: () => Promise<T>,
  isMissing: (error: unknown) => boolean = isMissingMethod,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isMissing(error)) throw unsupportedExtension(extension, operation, endpoint, error);
    throw error;
  }
}

export type { InferOptions, ModelMetadata, ModelOptions, ServerMetadata, TensorMetadata } from './client.js';
export { buildInferRequest, createTritonClient, TritonClient } from './client.js';
export {
  decodeBytesElements,
  decodeTensorData,
  elementCount,
  encodeBytesElements,
  encodeTensor,
} from './codec.js';
export type { InfergateConfig } from './config.js';
export { infergateConfigSchema, resolveConfig } from './config.js';
export type { DataType } from './datatype.js';
export { DATATYPES, datatypeFromConfigName, elementSize, isDataType } from './datatype.js';
export type { InfergateErrorOptions } from './errors.js';
export { abortError, ErrorCode, InfergateError, isBackpressureCode, isRetryableCode } from './errors.js';
export { fromGrpcStatus } from './grpc-status.js';
export { GrpcTransport } from './grpc-transport.js';
export { networkErrorCode } from './network-errors.js';
export type { ClientOptions, Endpoint, ResolvedClientOptions } from './options.js';
export {
  clientOptionsSchema,
  DEFAULT_SERVICE_NAME,
  describeIssues,
  MAX_MESSAGE_BYTES,
  parseEndpoint,
  parseOptions,
} from './options.js';
export type { Parameters, ParameterValue } from './parameters.js';
export { param } from './parameters.js';
export { InferResult, OutputTensor } from './result.js';
export type { EncodedTensor, InputTensor, TensorInputData, TensorOutputData, TypedArray } from './tensor.js';
export type {
  CallOptions,
  InferRequest,
  InferResponse,
  InferTransport,
  Interceptor,
  RequestedOutput,
} from './transport.js';
export { applyInterceptors } from './transport.js';
export { VERSION } from './version.js';

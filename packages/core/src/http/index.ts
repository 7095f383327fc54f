// @infergate/core/http — KServe v2 HTTP/REST over fetch. Nothing imported from here reaches
// `node:` modules, grpc-js or Buffer, so a Worker, Deno or Bun bundle of it stays small and runs.
export type { CallScope, CallScopeOptions } from '../call-scope.js';
export { checkTimeoutMs, createCallScope, NO_SCOPE, raceSignal, sleep } from '../call-scope.js';
export type { ModelMetadata, ModelOptions, ServerMetadata, TensorMetadata } from '../client.js';
export { decodeBytesElements, decodeTensorData, encodeBytesElements, encodeTensor } from '../codec.js';
export type { DataType } from '../datatype.js';
export { DATATYPES, isDataType } from '../datatype.js';
export type { InfergateErrorOptions } from '../errors.js';
export { abortError, ErrorCode, InfergateError, isBackpressureCode, isRetryableCode } from '../errors.js';
export { Extension } from '../extension.js';
export type { InferOptions } from '../infer-request.js';
export { buildInferRequest } from '../infer-request.js';
export { type WriteOutputsIntoOptions, writeOutputsInto } from '../internal/infer-response-into.js';
export type { Parameters, ParameterValue } from '../parameters.js';
export { param } from '../parameters.js';
export type {
  LoadModelOptions,
  RepositoryIndexOptions,
  RepositoryModel,
  UnloadModelOptions,
} from '../repository.js';
export { InferResult, OutputTensor } from '../result.js';
export type { LogSettings, TraceSettings, TraceSettingsOptions, TraceSettingsUpdate } from '../settings.js';
export type {
  CudaRegionStatus,
  RegisterCudaRegion,
  RegisterSystemRegion,
  SystemRegionStatus,
} from '../shared-memory-rpc.js';
export type { ModelStatistics } from '../statistics.js';
export type { EncodedTensor, InputTensor, TensorInputData, TensorOutputData, TypedArray } from '../tensor.js';
export type {
  CallOptions,
  InferRequest,
  InferResponse,
  InferTransport,
  Interceptor,
  RequestedOutput,
} from '../transport.js';
export { applyInterceptors } from '../transport.js';
export type { HttpClientOptions } from './http-client.js';
export { createHttpClient, HttpClient } from './http-client.js';
export type { GenerateRequest, GenerateResponse } from './http-generate.js';
export type { FetchFunction, HttpTransportOptions, ResolvedHttpTransportOptions } from './http-options.js';
export { httpClientOptionsSchema, httpOptionsSchema } from './http-options.js';
export { fromHttpStatus } from './http-status.js';
export type { HttpExchange, OpenResponse } from './http-transport.js';
export { createHttpTransport, HttpTransport } from './http-transport.js';

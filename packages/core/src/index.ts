export type { BatchShare } from './batch-share.js';
export { BATCH_SHARE_CONTEXT, batchShareOf, reportBatchShare } from './batch-share.js';
export type { CallScope, CallScopeOptions } from './call-scope.js';
export { checkTimeoutMs, createCallScope, NO_SCOPE, raceSignal, sleep } from './call-scope.js';
export type { CallSlo } from './call-slo.js';
export { CALL_SLO_CONTEXT, callSloOf } from './call-slo.js';
export type { ModelMetadata, ModelOptions, ServerMetadata, TensorMetadata } from './client.js';
export { createTritonClient, TritonClient } from './client.js';
export {
  decodeBytesElements,
  decodeTensorData,
  elementCount,
  encodeBytesElements,
  encodeTensor,
} from './codec.js';
export type {
  ConnectivityChange,
  ConnectivityListener,
  ConnectivitySource,
  ConnectivityState,
  WatchableChannel,
} from './connectivity.js';
export { ChannelConnectivity, isConnectivitySource } from './connectivity.js';
export type { CallContext, ContextKey } from './context-key.js';
export { createContextKey, getContextValue, withContextValue } from './context-key.js';
export { createGrpcTransport } from './create-grpc-transport.js';
export type { DataType } from './datatype.js';
export { DATATYPES, datatypeFromConfigName, elementSize, isDataType } from './datatype.js';
export type { InfergateErrorOptions, InfergateErrorOverrides } from './errors.js';
export { abortError, ErrorCode, InfergateError, isBackpressureCode, isRetryableCode } from './errors.js';
export { Extension, unsupportedExtension, withExtension } from './extension.js';
export { createGenAiTimingHistograms, type GenAiTimingHistograms } from './genai-histograms.js';
export { fromGrpcStatus } from './grpc-status.js';
export type { StreamCall } from './grpc-transport.js';
export { GrpcTransport } from './grpc-transport.js';
export { assertSafeHeaders } from './header-values.js';
export type { InferOptions } from './infer-request.js';
export { buildInferRequest } from './infer-request.js';
export { type WriteOutputsIntoOptions, writeOutputsInto } from './internal/infer-response-into.js';
export { createLiveGauge, type GaugeSource, lazyInstruments } from './lazy-instruments.js';
export { networkErrorCode } from './network-errors.js';
export type {
  ClientOptions,
  Endpoint,
  GrpcTransportOptions,
  ResolvedClientOptions,
  ResolvedGrpcTransportOptions,
} from './options.js';
export {
  channelTarget,
  clientOptionsSchema,
  describeIssues,
  MAX_MESSAGE_BYTES,
  parseEndpoint,
  parseOptions,
} from './options.js';
export type { Parameters, ParameterValue } from './parameters.js';
export { param } from './parameters.js';
export type {
  LoadModelOptions,
  RepositoryIndexOptions,
  RepositoryModel,
  UnloadModelOptions,
} from './repository.js';
export { InferResult, OutputTensor } from './result.js';
export { sdkTracer } from './sdk-tracer.js';
export type { SequenceOptions } from './sequence.js';
export { newSequenceId, Sequence } from './sequence.js';
export type { ServerSentEvent, ServerSentEventsOptions } from './server-sent-events.js';
export { parseServerSentEvents } from './server-sent-events.js';
export type { LogSettings, TraceSettings, TraceSettingsOptions, TraceSettingsUpdate } from './settings.js';
export type {
  CudaRegionStatus,
  RegisterCudaRegion,
  RegisterSystemRegion,
  SystemRegionStatus,
} from './shared-memory-rpc.js';
export type {
  BatchStatistics,
  Duration,
  InferenceStatistics,
  ModelStatistics,
  ResponseStatistics,
} from './statistics.js';
export type { StatisticsPoller, StatisticsPollerOptions } from './statistics-poller.js';
export { createStatisticsPoller } from './statistics-poller.js';
export { StreamSession } from './stream-session.js';
export type { CreateRegionOptions } from './system-shared-memory.js';
export { SHM_DIRECTORY, SystemSharedMemoryRegion } from './system-shared-memory.js';
export type {
  DataInputTensor,
  EncodedTensor,
  InputTensor,
  SharedMemoryBinding,
  SharedMemoryInputTensor,
  TensorInputData,
  TensorOutputData,
  TypedArray,
} from './tensor.js';
export { inSharedMemory, sharedMemoryParameters } from './tensor.js';
export { heuristicTokens } from './token-heuristic.js';
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

export type { RecordedCall } from './call-recorder.js';
export type { FakeAnthropicOptions } from './fake-llm/fake-anthropic.js';
export { startFakeAnthropic } from './fake-llm/fake-anthropic.js';
export type { FakeLlmFault, FakeLlmFaultKind } from './fake-llm/fake-faults.js';
export type { FakeLlmRequest, FakeLlmServer } from './fake-llm/fake-http-server.js';
export { fakeKeyMarker } from './fake-llm/fake-http-server.js';
export type { FakeOpenAIOptions } from './fake-llm/fake-openai.js';
export { startFakeOpenAI } from './fake-llm/fake-openai.js';
export type { FakeChatRequest, FakeLlmOptions } from './fake-llm/fake-reply.js';
export type { ActiveFault, Fault } from './fault-injector.js';
export { ANY_MODEL, FaultInjector } from './fault-injector.js';
export type { FaultProxy, FaultProxyOptions, ProxyFault } from './fault-proxy.js';
export { createFaultProxy } from './fault-proxy.js';
export type { GrpcTransportKind } from './grpc-listener.js';
export type { HostileBehavior } from './hostile/hostile-responses.js';
export { HOSTILE_BEHAVIORS } from './hostile/hostile-responses.js';
export type { HostileServer, HostileServerOptions } from './hostile/hostile-server.js';
export { startHostileServer } from './hostile/hostile-server.js';
export type { ResponseStats, StatDuration, VersionStats } from './inference-stats.js';
export type {
  ExecuteContext,
  ExecuteInput,
  ExecuteOutput,
  ExecuteRequest,
  ModelConfigInit,
  ModelDefinition,
  SequenceContext,
  TensorSpec,
} from './model-definition.js';
export type { IndexEntry, LoadRecord } from './model-registry.js';
export type { ModelStats } from './model-stats.js';
export { accumulateModel } from './models/accumulate.js';
export { addSubModel } from './models/add-sub.js';
export { failModel } from './models/fail.js';
export type { GenerateModelOptions } from './models/generate.js';
export { generateModel } from './models/generate.js';
export { identityModel } from './models/identity.js';
export { repeatModel } from './models/repeat.js';
export { simulatedGpuModel } from './models/simulated-gpu-model.js';
export type { ProtocolGroup, Restriction } from './restriction.js';
export { TRITON_EXTENSIONS } from './restriction.js';
export type { StatusCode, StatusName } from './rpc-error.js';
export { RpcError } from './rpc-error.js';
export type { RunScriptOptions, ScriptRun } from './run-script.js';
export { runScript } from './run-script.js';
export type { ServerLogSettings, ServerTraceSettings } from './runtime-settings.js';
export { DEFAULT_TRACE_SETTINGS } from './runtime-settings.js';
export type { RepositoryView, TestServerTls } from './server-options.js';
export type { SharedMemoryRegion } from './shared-memory.js';
export { shmPath } from './shared-memory.js';
export type { ExecutionStart, SimulatedGpuOptions, SimulatedGpuStats } from './simulated-gpu.js';
export { SimulatedGpu } from './simulated-gpu.js';
export type { TestCertificates } from './test-certificates.js';
export { generateTestCertificates } from './test-certificates.js';
export type { TestServerOptions } from './test-server.js';
export { startTestServer, TestServer } from './test-server.js';
export { VERSION } from './version.js';

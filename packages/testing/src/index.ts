export type { RecordedCall } from './call-recorder.js';
export type { ActiveFault, Fault } from './fault-injector.js';
export { ANY_MODEL, FaultInjector } from './fault-injector.js';
export type {
  ExecuteContext,
  ExecuteInput,
  ExecuteOutput,
  ExecuteRequest,
  ModelConfigInit,
  ModelDefinition,
  TensorSpec,
} from './model-definition.js';
export type { ModelStats } from './model-stats.js';
export { addSubModel } from './models/add-sub.js';
export { failModel } from './models/fail.js';
export { identityModel } from './models/identity.js';
export { simulatedGpuModel } from './models/simulated-gpu-model.js';
export type { StatusCode, StatusName } from './rpc-error.js';
export { RpcError } from './rpc-error.js';
export type { SimulatedGpuOptions, SimulatedGpuStats } from './simulated-gpu.js';
export { SimulatedGpu } from './simulated-gpu.js';
export type { TestServerOptions } from './test-server.js';
export { startTestServer, TestServer } from './test-server.js';
export { VERSION } from './version.js';

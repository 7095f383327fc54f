// Everything the gRPC calls need of the protobuf runtime and of the generated descriptors, in one
// module that core loads on the first call (see `loadGrpcWire` in lazy-modules.ts), not at import:
// loading @bufbuild/protobuf and building the descriptors of src/gen were most of core's import
// time. Nothing outside this module's own graph may import these modules with a value import.
export { create, fromBinary, toBinary } from '@bufbuild/protobuf';
export { GRPCInferenceService, ModelStreamInferResponseSchema } from '../gen/grpc_service_pb.js';
export { streamOverH2 } from '../h2/stream-over-h2.js';
export { loadModel, repositoryIndex, unloadModel } from '../repository.js';
export { getLogSettings, getTraceSettings, updateLogSettings, updateTraceSettings } from '../settings.js';
export {
  cudaSharedMemoryStatus,
  registerCudaSharedMemory,
  registerSystemSharedMemory,
  systemSharedMemoryStatus,
  unregisterSharedMemory,
} from '../shared-memory-rpc.js';
export {
  checkRequestedOutputs,
  fromModelInferResponse,
  parseModelInferResponse,
  sharedMemoryOutputs,
} from './infer-wire.js';
export { grpcOneRequestStream, readStream } from './read-stream.js';

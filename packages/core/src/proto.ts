// The generated protobuf schemas and service descriptors (Triton's wire contract), for code that
// speaks the protocol directly: servers, proxies, tests. Published as `@infergate/core/proto`.
export * from './gen/grpc_service_pb.js';
export * from './gen/health_pb.js';
export * from './gen/model_config_pb.js';

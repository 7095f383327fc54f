/** The generated Triton protobuf schemas this server needs, from `@infergate/core/proto`. */
export {
  DataType as ConfigDataType,
  GRPCInferenceService,
  type InferParameter,
  InferParameterSchema,
  type ModelConfig,
  ModelConfigSchema,
  type ModelInferRequest,
  ModelInferRequestSchema,
  type ModelInferResponse,
  type ModelInferResponse_InferOutputTensor,
  ModelInferResponseSchema,
  ModelMetadataResponseSchema,
} from '@infergate/core/proto';

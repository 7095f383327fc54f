/** The generated Triton protobuf schemas this server needs, from `@infergate/core/proto`. */
export {
  DataType as ConfigDataType,
  GRPCInferenceService,
  type InferParameter,
  InferParameterSchema,
  type LogSettingsRequest_SettingValue,
  type ModelConfig,
  ModelConfigSchema,
  type ModelInferRequest,
  ModelInferRequestSchema,
  type ModelInferResponse,
  type ModelInferResponse_InferOutputTensor,
  ModelInferResponseSchema,
  ModelMetadataResponseSchema,
  type ModelRepositoryParameter,
  type ModelStreamInferResponse,
  ModelStreamInferResponseSchema,
} from '@infergate/core/proto';

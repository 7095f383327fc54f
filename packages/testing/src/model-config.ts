import { create, type MessageInitShape } from '@bufbuild/protobuf';
import type { DataType } from '@infergate/core';
import {
  ConfigDataType,
  type ModelConfig,
  ModelConfigSchema,
  type ModelMetadataResponseSchema,
} from './internal/proto.js';
import type { ResolvedModel, TensorSpec } from './model-definition.js';

/** Triton's config enum name for a wire datatype: FP32 → TYPE_FP32, BYTES → TYPE_STRING. */
export function configTypeName(datatype: DataType): string {
  return datatype === 'BYTES' ? 'TYPE_STRING' : `TYPE_${datatype}`;
}

/** The wire datatype of a config enum value (TYPE_FP32 → FP32, TYPE_STRING → BYTES); undefined for TYPE_INVALID or an unknown value. */
export function wireDatatype(type: ConfigDataType): DataType | undefined {
  const name = ConfigDataType[type] as string | undefined;
  if (name === undefined || name === 'TYPE_INVALID') return undefined;
  return (name === 'TYPE_STRING' ? 'BYTES' : name.slice('TYPE_'.length)) as DataType;
}

function configType(datatype: DataType): ConfigDataType {
  return ConfigDataType[configTypeName(datatype) as keyof typeof ConfigDataType];
}

function dims(spec: TensorSpec): bigint[] {
  return spec.dims.map((dim) => BigInt(dim));
}

/**
 * The `inference.ModelConfig` Triton would report for this model. Batching models get no
 * `dynamic_batching`: this server runs every request as its own execution (Triton's default
 * scheduler), and a client that reads the config to decide whether the server merges requests
 * (the batcher's `serverBatching`) must not be told that it does. A model that merges can say so
 * in its definition's `config`.
 */
export function toModelConfig(model: ResolvedModel): ModelConfig {
  return create(ModelConfigSchema, {
    name: model.name,
    platform: model.platform,
    backend: 'infergate_test',
    maxBatchSize: model.maxBatchSize,
    versionPolicy: { policyChoice: { case: 'latest', value: { numVersions: model.versions.length } } },
    input: model.inputs.map((spec) => ({
      name: spec.name,
      dataType: configType(spec.datatype),
      dims: dims(spec),
      optional: spec.optional ?? false,
    })),
    output: model.outputs.map((spec) => ({
      name: spec.name,
      dataType: configType(spec.datatype),
      dims: dims(spec),
    })),
    ...(model.decoupled === true ? { modelTransactionPolicy: { decoupled: true } } : {}),
    ...model.config,
  });
}

/** Model metadata shapes include the batch dimension (as -1) for batching models, like Triton's. */
export function toModelMetadata(
  model: ResolvedModel,
): Omit<MessageInitShape<typeof ModelMetadataResponseSchema>, '$typeName'> {
  const tensor = (spec: TensorSpec) => ({
    name: spec.name,
    datatype: spec.datatype,
    shape: model.maxBatchSize > 0 ? [-1n, ...dims(spec)] : dims(spec),
  });
  return {
    name: model.name,
    versions: [...model.versions],
    platform: model.platform,
    inputs: model.inputs.map(tensor),
    outputs: model.outputs.map(tensor),
  };
}

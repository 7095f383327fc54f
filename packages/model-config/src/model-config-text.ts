import { fromJson, type JsonValue, toJson } from '@bufbuild/protobuf';
import { ErrorCode, InfergateError } from '@infergate/core';
import { type ModelConfig, ModelConfigSchema } from '@infergate/core/proto';
import { parseTextFormat } from './parse-text-format.js';
import { printTextFormat } from './print-text-format.js';

/** Parses a `config.pbtxt`; `source` (a file name) prefixes error messages. */
export function parseModelConfig(text: string, source = 'config.pbtxt'): ModelConfig {
  return parseTextFormat(ModelConfigSchema, text, source);
}

/** Prints a model configuration as a `config.pbtxt` (Triton's layout, see `printTextFormat()`). */
export function printModelConfig(config: ModelConfig): string {
  return printTextFormat(ModelConfigSchema, config);
}

/**
 * The configuration as the JSON object Triton takes in a load request's `config` override
 * (`TritonClient.loadModel(name, { config })`): protobuf JSON with the proto's snake_case names,
 * which is what Triton's own JSON parser reads.
 */
export function modelConfigToJson(config: ModelConfig): Record<string, unknown> {
  return toJson(ModelConfigSchema, config, { useProtoFieldName: true }) as Record<string, unknown>;
}

/**
 * The reverse of `modelConfigToJson`: a configuration from Triton's JSON form (what
 * `HttpClient.modelConfig()` and Triton's HTTP `/config` endpoint answer). Fields this proto does
 * not know (a newer Triton) are ignored; a value of the wrong type is `INVALID_ARGUMENT`.
 */
export function modelConfigFromJson(json: Record<string, unknown>, source = 'the JSON config'): ModelConfig {
  try {
    return fromJson(ModelConfigSchema, json as JsonValue, { ignoreUnknownFields: true });
  } catch (error) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `${source} is not a model configuration: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

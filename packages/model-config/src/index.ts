// @infergate/model-config: see README.md. Public exports are listed here explicitly.

export type { EnumInit, InitValue, MessageInit, ModelConfigInit } from './message-init.js';
export { buildModelConfig } from './model-config-builder.js';
export { modelConfigToJson, parseModelConfig, printModelConfig } from './model-config-text.js';
export { parseTextFormat } from './parse-text-format.js';
export { printTextFormat } from './print-text-format.js';
export { modelConfigProblems, validateModelConfig } from './validate-model-config.js';

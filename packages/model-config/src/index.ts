// @infergate/model-config: see README.md. Public exports are listed here explicitly.

export type { CheckPresetOptions } from './check-multi-tenant-preset.js';
export { checkMultiTenantPreset } from './check-multi-tenant-preset.js';
export type { ConfigDifference } from './diff-model-config.js';
export { diffMessages, diffModelConfig } from './diff-model-config.js';
export type { LintOptions } from './lint-model-config.js';
export { formatFinding, lintModelConfig, lintOptionsSchema } from './lint-model-config.js';
export type { LintContext, LintFinding, LintRule, LintSeverity } from './lint-rules.js';
export { LINT_RULES } from './lint-rules.js';
export type { EnumInit, InitValue, MessageInit, ModelConfigInit } from './message-init.js';
export { buildModelConfig } from './model-config-builder.js';
export {
  modelConfigFromJson,
  modelConfigToJson,
  parseModelConfig,
  printModelConfig,
} from './model-config-text.js';
export type {
  MultiTenantClientSettings,
  MultiTenantPreset,
  MultiTenantPresetOptions,
  TenantCallSettings,
} from './multi-tenant-preset.js';
export { createMultiTenantPreset, multiTenantPresetOptionsSchema } from './multi-tenant-preset.js';
export { parseTextFormat } from './parse-text-format.js';
export { printTextFormat } from './print-text-format.js';
export { modelConfigProblems, validateModelConfig } from './validate-model-config.js';

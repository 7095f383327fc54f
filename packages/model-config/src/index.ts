// @infergate/model-config: see README.md. Public exports are listed here explicitly.
export { modelConfigToJson, parseModelConfig, printModelConfig } from './model-config-text.js';
export { parseTextFormat } from './parse-text-format.js';
export { printTextFormat } from './print-text-format.js';

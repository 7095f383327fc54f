// @infergate/ai-sdk: see README.md. Public exports are listed here explicitly.
export { toAiSdkFinishReason, toAiSdkUsage } from './ai-sdk-usage.js';
export type { InfergateCallSettings } from './infergate-language-model.js';
export { InfergateLanguageModel } from './infergate-language-model.js';
export type { InfergateProvider, InfergateProviderOptions } from './infergate-provider.js';
export { createInfergate } from './infergate-provider.js';
export { VERSION } from './version.js';

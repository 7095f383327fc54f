export type { AnthropicChatModelOptions } from './anthropic-chat-model.js';
export {
  ANTHROPIC_BASE_URL,
  anthropicFinishReason,
  createAnthropicChatModel,
} from './anthropic-chat-model.js';
export type { FetchFunction } from './internal/http-request.js';
export type { TextOutputMode } from './internal/triton-output.js';
export type { HttpChatModelOptions } from './model-options.js';
export type { OpenAIChatModelOptions } from './openai-chat-model.js';
export { createOpenAIChatModel, OPENAI_BASE_URL } from './openai-chat-model.js';
export type { OpenAICompatibleChatModelOptions } from './openai-compatible-chat-model.js';
export { createOpenAICompatibleChatModel } from './openai-compatible-chat-model.js';
export { formatChatPrompt } from './prompt-format.js';
export type { HttpErrorContext, ProviderErrorBody } from './provider-errors.js';
export { codeForHttpError, codeForStreamError, httpError, parseErrorBody } from './provider-errors.js';
export type { HeaderSource } from './retry-after.js';
export { parseRetryAfter } from './retry-after.js';
export type { TritonChatModelOptions } from './triton-chat-model.js';
export { createTritonChatModel } from './triton-chat-model.js';
export type { SamplingStyle, TritonInputSettings, TritonInputs } from './triton-inputs.js';
export { buildTritonInputs } from './triton-inputs.js';
export type {
  ChatCallOptions,
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatRole,
  ChatStreamEvent,
  ChatUsage,
  FinishReason,
} from './types.js';
export type { AnthropicUsageWire, OpenAIUsageWire } from './usage.js';
export { mergeAnthropicUsage, normalizeAnthropicUsage, normalizeOpenAIUsage, unknownUsage } from './usage.js';
export { VERSION } from './version.js';

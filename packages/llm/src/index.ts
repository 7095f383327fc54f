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

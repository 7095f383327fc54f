import type { ProviderV4 } from '@ai-sdk/provider';
import { ErrorCode, InfergateError, parseOptions } from '@infergate/core';
import type { ChatModel } from '@infergate/llm';
import { z } from 'zod';
import { type InfergateCallSettings, InfergateLanguageModel } from './infergate-language-model.js';

export interface InfergateProviderOptions extends InfergateCallSettings {
  /**
   * The chat model every language model of this provider calls: a chat router (fallback across
   * Triton-hosted LLMs and providers), a single adapter, or either wrapped by `withCost`.
   */
  model: ChatModel;
  /**
   * The provider's name: the AI SDK's `provider` field and the key of per-call options
   * (`providerOptions: { infergate: { tenant } }`). @default 'infergate'
   */
  name?: string;
}

/** An AI SDK provider (ProviderV4) whose language models are infergate chat calls. */
export interface InfergateProvider extends ProviderV4 {
  /** The language model for `modelId` (the request's model; a router's targets may use their own). */
  (modelId: string): InfergateLanguageModel;
  languageModel(modelId: string): InfergateLanguageModel;
}

const optionsSchema = z.object({
  model: z.custom<ChatModel>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      typeof (value as ChatModel).chat === 'function' &&
      typeof (value as ChatModel).chatStream === 'function',
    'model must be an infergate ChatModel (chat and chatStream)',
  ),
  name: z.string().min(1).default('infergate'),
  tenant: z.string().min(1).optional(),
  context: z.custom<ReadonlyMap<string | symbol, unknown>>((value) => value instanceof Map).optional(),
  timeoutMs: z.number().int().positive().optional(),
});

function noSuchModel(kind: string, modelId: string): never {
  throw new InfergateError(
    ErrorCode.Unimplemented,
    `infergate provides language models only; there is no ${kind} model '${modelId}'`,
  );
}

/**
 * Creates an AI SDK provider over an infergate chat model or router, for `generateText`,
 * `streamText` and the rest of the AI SDK. Usage comes back in the AI SDK's shape (cache reads and
 * writes, reasoning tokens); fallback, budgets, cost and tracing are the given model's.
 */
export function createInfergate(options: InfergateProviderOptions): InfergateProvider {
  const { model, name, ...settings } = parseOptions(optionsSchema, options, 'createInfergate options');
  const languageModel = (modelId: string) => {
    if (typeof modelId !== 'string' || modelId === '') {
      throw new InfergateError(ErrorCode.InvalidArgument, 'a model id is required, e.g. infergate("chat")');
    }
    return new InfergateLanguageModel(model, modelId, name, settings);
  };
  const provider = (modelId: string) => languageModel(modelId);
  return Object.assign(provider, {
    specificationVersion: 'v4' as const,
    languageModel,
    embeddingModel: (modelId: string) => noSuchModel('embedding', modelId),
    imageModel: (modelId: string) => noSuchModel('image', modelId),
  });
}

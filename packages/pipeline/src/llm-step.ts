import type { PortType } from './port-type.js';
import type { Step } from './step.js';

/** What the step needs of a chat model (`@infergate/llm`'s `ChatModel` has it). */
export interface ChatModelLike {
  chat(
    request: {
      model: string;
      messages: readonly { role: 'system' | 'user' | 'assistant'; content: string }[];
      maxTokens?: number;
    },
    options?: { signal?: AbortSignal; timeoutMs?: number; tenant?: string },
  ): Promise<{ text: string; usage: { inputTokens: number | undefined; outputTokens: number | undefined } }>;
}

export interface LlmStepOptions {
  model: ChatModelLike;
  /** The provider's model name (e.g. 'gpt-4o-mini'). */
  modelName: string;
  /** The values the prompt reads, by name, with their types. */
  inputs: Readonly<Record<string, PortType>>;
  /** The prompt: one user message, or the whole conversation. */
  prompt(
    values: Record<string, unknown>,
  ): string | readonly { role: 'system' | 'user' | 'assistant'; content: string }[];
  /** @default the provider's */
  maxTokens?: number;
  /** Prices per million tokens: the step's cost is its usage × these. @default no cost */
  pricing?: { inputUsdPerMillionTokens: number; outputUsdPerMillionTokens: number };
}

/** A step that asks a chat model. Outputs: `text` (the reply) and `usage` (tokens, as json). */
export function llmStep(options: LlmStepOptions): Step {
  return {
    kind: 'llm',
    inputs: options.inputs,
    outputs: { text: { kind: 'text' }, usage: { kind: 'json' } },
    async run(values, context) {
      const prompt = options.prompt(values);
      const messages = typeof prompt === 'string' ? [{ role: 'user' as const, content: prompt }] : prompt;
      const timeoutMs = context.callTimeoutMs();
      const response = await options.model.chat(
        {
          model: options.modelName,
          messages,
          ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
        },
        {
          ...(context.signal === undefined ? {} : { signal: context.signal }),
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
          ...(context.tenant === undefined ? {} : { tenant: context.tenant }),
        },
      );
      const pricing = options.pricing;
      const { inputTokens, outputTokens } = response.usage;
      const costUsd =
        pricing === undefined || inputTokens === undefined || outputTokens === undefined
          ? undefined
          : (inputTokens * pricing.inputUsdPerMillionTokens +
              outputTokens * pricing.outputUsdPerMillionTokens) /
            1e6;
      return { outputs: { text: response.text, usage: response.usage }, costUsd };
    },
  };
}

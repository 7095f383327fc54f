import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  SharedV4Warning,
} from '@ai-sdk/provider';
import type { CallOptions } from '@infergate/core';
import type { ChatModel, ChatRequest, ChatStreamEvent, ChatUsage, FinishReason } from '@infergate/llm';
import { toAiSdkFinishReason, toAiSdkUsage } from './ai-sdk-usage.js';
import { toChatMessages } from './internal/prompt.js';

/** What every call of a provider's models carries besides the AI SDK's own settings. */
export interface InfergateCallSettings {
  /** Tenant for budgets and cost attribution (CallOptions.tenant). */
  tenant?: string | undefined;
  /** Context values (e.g. @infergate/cost's API_KEY_CONTEXT) for interceptors and cost. */
  context?: ReadonlyMap<string | symbol, unknown> | undefined;
  /** Deadline of each call, in ms. */
  timeoutMs?: number | undefined;
}

/** The call settings AI SDK users may pass per call as `providerOptions[providerName]`. */
interface PerCallOptions {
  tenant?: unknown;
}

// Settings of the AI SDK that an infergate ChatRequest has no slot for: reported, not silently lost.
const UNSUPPORTED_SETTINGS = ['topP', 'topK', 'presencePenalty', 'frequencyPenalty', 'seed'] as const;

/**
 * A LanguageModelV4 (the AI SDK's language-model specification, version 4) over an infergate
 * ChatModel: a Triton-hosted LLM, a provider adapter, a chat router with fallback, or any of those
 * wrapped by `withCost`. The AI SDK's abort signal cancels the call; its retries should stay off
 * (`maxRetries: 0`) when the model is a router, which retries and falls back itself.
 */
export class InfergateLanguageModel implements LanguageModelV4 {
  readonly specificationVersion = 'v4';
  readonly provider: string;
  readonly modelId: string;
  readonly supportedUrls: Record<string, RegExp[]> = {};
  readonly #model: ChatModel;
  readonly #settings: InfergateCallSettings;

  constructor(model: ChatModel, modelId: string, provider: string, settings: InfergateCallSettings = {}) {
    this.#model = model;
    this.modelId = modelId;
    this.provider = provider;
    this.#settings = settings;
  }

  #prepare(options: LanguageModelV4CallOptions) {
    const warnings: SharedV4Warning[] = [];
    for (const setting of UNSUPPORTED_SETTINGS) {
      if (options[setting] !== undefined) warnings.push({ type: 'unsupported', feature: setting });
    }
    if (options.tools !== undefined && options.tools.length > 0) {
      warnings.push({
        type: 'unsupported',
        feature: 'tools',
        details: 'infergate chat models answer with text only',
      });
    }
    if (options.responseFormat?.type === 'json') {
      warnings.push({ type: 'unsupported', feature: 'responseFormat', details: 'JSON mode is not enforced' });
    }
    const request: ChatRequest = {
      model: this.modelId,
      messages: toChatMessages(options.prompt),
      ...(options.maxOutputTokens !== undefined ? { maxTokens: options.maxOutputTokens } : {}),
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      ...(options.stopSequences !== undefined ? { stop: options.stopSequences } : {}),
    };
    const perCall = (options.providerOptions?.[this.provider] ?? {}) as PerCallOptions;
    const tenant = typeof perCall.tenant === 'string' ? perCall.tenant : this.#settings.tenant;
    const headers = Object.fromEntries(
      Object.entries(options.headers ?? {}).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      ),
    );
    const callOptions: CallOptions = {
      ...(options.abortSignal !== undefined ? { signal: options.abortSignal } : {}),
      ...(tenant !== undefined ? { tenant } : {}),
      ...(this.#settings.context !== undefined ? { context: this.#settings.context } : {}),
      ...(this.#settings.timeoutMs !== undefined ? { timeoutMs: this.#settings.timeoutMs } : {}),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    };
    return { request, callOptions, warnings };
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const { request, callOptions, warnings } = this.#prepare(options);
    const response = await this.#model.chat(request, callOptions);
    return {
      content: response.text === '' ? [] : [{ type: 'text', text: response.text }],
      finishReason: toAiSdkFinishReason(response.finishReason, response.rawFinishReason),
      usage: toAiSdkUsage(response.usage),
      warnings,
      request: { body: request },
      response: { id: response.id, modelId: response.model },
      providerMetadata: { [this.provider]: { answeredBy: response.provider } },
    };
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const { request, callOptions, warnings } = this.#prepare(options);
    const events = this.#model.chatStream(request, callOptions)[Symbol.asyncIterator]();
    // Wait for the first event: a failure before it (budget, every target down) rejects here, as an
    // HTTP provider's failed request does, and a router has already fallen back if it could.
    const first = await events.next();
    return { stream: partsOf(events, first, warnings), request: { body: request } };
  }
}

function partsOf(
  events: AsyncIterator<ChatStreamEvent>,
  first: IteratorResult<ChatStreamEvent>,
  warnings: SharedV4Warning[],
): ReadableStream<LanguageModelV4StreamPart> {
  let pending: IteratorResult<ChatStreamEvent> | undefined = first;
  let textOpen = false;
  let usage: ChatUsage | undefined;
  let finish: { reason: FinishReason; raw: string | undefined } | undefined;
  const textId = '0';
  return new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      controller.enqueue({ type: 'stream-start', warnings });
    },
    async pull(controller) {
      // Loop until something is enqueued: a pull that enqueues nothing is not called again.
      for (;;) {
        let next: IteratorResult<ChatStreamEvent>;
        try {
          next = pending ?? (await events.next());
        } catch (error) {
          controller.enqueue({ type: 'error', error });
          controller.close();
          return;
        }
        pending = undefined;
        if (next.done) {
          if (textOpen) controller.enqueue({ type: 'text-end', id: textId });
          controller.enqueue({
            type: 'finish',
            usage: toAiSdkUsage(usage),
            finishReason: toAiSdkFinishReason(finish?.reason ?? 'other', finish?.raw),
          });
          controller.close();
          return;
        }
        const event = next.value;
        if (event.type === 'usage') {
          usage = event.usage;
          continue;
        }
        if (event.type === 'finish') {
          finish = { reason: event.finishReason, raw: event.rawFinishReason };
          controller.enqueue({ type: 'response-metadata', id: event.id, modelId: event.model });
          return;
        }
        if (!textOpen) {
          textOpen = true;
          controller.enqueue({ type: 'text-start', id: textId });
        }
        controller.enqueue({ type: 'text-delta', id: textId, delta: event.text });
        return;
      }
    },
    async cancel() {
      // The consumer stopped reading: end the upstream call (HTTP request or gRPC stream) too.
      await events.return?.();
    },
  });
}

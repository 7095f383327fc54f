import { type CallScope, createCallScope, ErrorCode, InfergateError } from '@infergate/core';
import type {
  ChatCallOptions,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatStreamEvent,
  ChatUsage,
  FinishReason,
} from '../types.js';
import { type ChatErrorContext, toChatError } from './chat-error.js';
import { type ChatSpan, spanFinishReason, startChatSpan } from './chat-span.js';
import { startChatMetrics } from './genai-metrics.js';
import { resolveModel } from './resolve-model.js';

/** What one adapter tells the shared call lifecycle about itself. */
export interface ChatCallSettings {
  provider: string;
  defaultModel: string | undefined;
  /** Recorded on the span when a request sets no maxTokens (the adapter sends it). */
  defaultMaxTokens: number | undefined;
  /** `host:port` or origin, for errors. */
  endpoint: string | undefined;
  /** `server.address` / `server.port` for spans. */
  server: { address: string; port: number | undefined } | undefined;
  /** Texts redacted from error messages (API keys). */
  secrets: readonly string[];
  timeoutMs: number | undefined;
  tracing: boolean;
  captureContent: boolean;
}

/** One call as a wire module sees it. */
export interface ChatCall {
  readonly model: string;
  /** Aborts with the caller, at the deadline, or when a stream's consumer leaves. */
  readonly signal: AbortSignal;
  readonly span: ChatSpan;
}

/** What a stream knows so far; a wire module updates it so a failed stream's span says how far it got. */
export interface StreamProgress {
  id: string;
  model: string;
}

/** How a stream ended, returned by a wire module's stream generator. */
export interface StreamSummary {
  id: string;
  model: string;
  finishReason: FinishReason;
  rawFinishReason: string | undefined;
  usage: ChatUsage;
}

function begin(settings: ChatCallSettings, request: ChatRequest, options: ChatCallOptions) {
  const model = resolveModel(request, settings.defaultModel, settings.provider);
  const context: ChatErrorContext = {
    provider: settings.provider,
    model,
    endpoint: settings.endpoint,
    secrets: settings.secrets,
  };
  // `own`: a stream's consumer leaving must abort the request even without a deadline.
  const scope: CallScope = createCallScope({
    signal: options.signal,
    timeoutMs: options.timeoutMs ?? settings.timeoutMs,
    own: true,
  });
  const maxTokens = request.maxTokens ?? settings.defaultMaxTokens;
  const span = startChatSpan({
    enabled: settings.tracing,
    captureContent: settings.captureContent,
    provider: settings.provider,
    request: { ...request, model, ...(maxTokens === undefined ? {} : { maxTokens }) },
    server: settings.server,
  });
  const metrics = startChatMetrics({
    enabled: settings.tracing,
    provider: settings.provider,
    model,
    server: settings.server,
  });
  const signal = scope.signal as AbortSignal;
  return { call: { model, signal, span } satisfies ChatCall, scope, context, metrics };
}

/** The lifecycle of a `chat` call: scope, span, the wire's request, errors and usage on the span. */
export async function runChat(
  settings: ChatCallSettings,
  request: ChatRequest,
  options: ChatCallOptions,
  send: (call: ChatCall) => Promise<ChatResponse>,
): Promise<ChatResponse> {
  let started: ReturnType<typeof begin> | undefined;
  try {
    started = begin(settings, request, options);
    const { call } = started;
    if (call.signal.aborted) throw call.signal.reason;
    const result = await send(call);
    call.span.end({ ...result, finishReason: spanFinishReason(result.rawFinishReason, result.finishReason) });
    started.metrics.end(result);
    return result;
  } catch (error) {
    if (started === undefined) throw error;
    const mapped = toChatError(error, started.scope, started.context);
    started.call.span.end(undefined, mapped);
    started.metrics.end(undefined, mapped.code);
    throw mapped;
  } finally {
    started?.scope.dispose();
  }
}

/**
 * The lifecycle of a `chatStream` call. The wire module yields text deltas and returns how the
 * stream ended; this yields the deltas, then `usage` and `finish`. Leaving the loop early aborts
 * the request.
 */
export async function* runChatStream(
  settings: ChatCallSettings,
  request: ChatRequest,
  options: ChatCallOptions,
  stream: (call: ChatCall, progress: StreamProgress) => AsyncGenerator<string, StreamSummary, undefined>,
): AsyncGenerator<ChatStreamEvent, void, undefined> {
  const { call, scope, context, metrics } = begin(settings, request, options);
  const progress: StreamProgress = { id: '', model: call.model };
  let text = '';
  let failure: InfergateError | undefined;
  let completed = false;
  let deltas: AsyncGenerator<string, StreamSummary, undefined> | undefined;
  try {
    if (call.signal.aborted) throw call.signal.reason;
    deltas = stream(call, progress);
    let step = await deltas.next();
    while (step.done !== true) {
      metrics.chunk();
      if (settings.captureContent) text += step.value;
      yield { type: 'text-delta', text: step.value };
      step = await deltas.next();
    }
    const summary = step.value;
    completed = true;
    call.span.end({
      id: summary.id,
      model: summary.model,
      finishReason: spanFinishReason(summary.rawFinishReason, summary.finishReason),
      usage: summary.usage,
      text,
    });
    metrics.end(summary);
    yield { type: 'usage', usage: summary.usage };
    yield {
      type: 'finish',
      finishReason: summary.finishReason,
      rawFinishReason: summary.rawFinishReason,
      id: summary.id,
      model: summary.model,
    };
  } catch (error) {
    failure = toChatError(error, scope, context);
    throw failure;
  } finally {
    if (!completed) {
      scope.abort(
        new InfergateError(ErrorCode.Cancelled, 'the stream was closed by its consumer', {
          model: call.model,
        }),
      );
      call.span.end({ id: progress.id, model: progress.model, text }, failure);
      metrics.end({ model: progress.model }, failure?.code ?? ErrorCode.Cancelled);
      // Lets the wire module's own cleanup (an SSE reader, a gRPC stream) run.
      await deltas?.return(undefined as never).catch(() => {});
    }
    scope.dispose();
  }
}

/** How a wire module answers one call: whole, or as text deltas that end with a summary. */
export interface ChatWire {
  send(request: ChatRequest, options: ChatCallOptions, call: ChatCall): Promise<ChatResponse>;
  deltas(
    request: ChatRequest,
    options: ChatCallOptions,
    call: ChatCall,
    progress: StreamProgress,
  ): AsyncGenerator<string, StreamSummary, undefined>;
}

/** The ChatModel of a wire module: each call runs the shared lifecycle around `wire`. */
export function wireChatModel(
  settings: ChatCallSettings,
  contextWindow: number | undefined,
  wire: ChatWire,
): ChatModel {
  return {
    provider: settings.provider,
    ...(settings.defaultModel === undefined ? {} : { defaultModel: settings.defaultModel }),
    ...(contextWindow === undefined ? {} : { contextWindow }),
    chat: (request, options = {}) =>
      runChat(settings, request, options, (call) => wire.send(request, options, call)),
    chatStream: (request, options = {}) =>
      runChatStream(settings, request, options, (call, progress) =>
        wire.deltas(request, options, call, progress),
      ),
  };
}

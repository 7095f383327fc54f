import { randomUUID } from 'node:crypto';
import { buildInferRequest, type InferResponse, type InferTransport } from '@infergate/core';
import { buildTritonInputs, type TritonInputSettings } from '../triton-inputs.js';
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse } from '../types.js';
import {
  type ChatCall,
  type ChatCallSettings,
  type StreamProgress,
  type StreamSummary,
  wireChatModel,
} from './run-chat.js';
import { type TextOutputMode, TritonOutputReader } from './triton-output.js';

/** Everything the Triton text wire needs, resolved from the adapter's options. */
export interface TritonWireSettings {
  transport: InferTransport;
  call: ChatCallSettings;
  inputs: TritonInputSettings;
  modelVersion: string | undefined;
  textOutput: TextOutputMode;
  decoupled: boolean;
  contextWindow: number | undefined;
  formatPrompt: (messages: readonly ChatMessage[]) => string;
}

/**
 * A ChatModel over the text_input/text_output convention: one ModelStreamInfer (decoupled) or
 * ModelInfer call per chat call, its responses folded by TritonOutputReader.
 */
export function tritonWireChatModel(config: TritonWireSettings): ChatModel {
  const { call: settings, transport } = config;

  function responses(request: ChatRequest, call: ChatCall, stream: boolean): AsyncIterable<InferResponse> {
    const fallback = settings.defaultMaxTokens;
    const effective =
      request.maxTokens === undefined && fallback !== undefined
        ? { ...request, maxTokens: fallback }
        : request;
    const { inputs, parameters, outputs } = buildTritonInputs(
      config.inputs,
      config.formatPrompt(request.messages),
      effective,
      stream,
    );
    const inferRequest = buildInferRequest(call.model, inputs, {
      requestId: `chat-${randomUUID()}`,
      parameters,
      outputs,
      ...(config.modelVersion === undefined ? {} : { modelVersion: config.modelVersion }),
    });
    const callOptions = { signal: call.signal };
    if (config.decoupled) return transport.stream(inferRequest, callOptions);
    return (async function* () {
      yield await transport.infer(inferRequest, callOptions);
    })();
  }

  const reader = () => new TritonOutputReader(config.inputs.outputName, config.textOutput);

  async function send(request: ChatRequest, call: ChatCall): Promise<ChatResponse> {
    const output = reader();
    for await (const response of responses(request, call, false)) output.read(response);
    return {
      id: output.id,
      model: output.model || call.model,
      text: output.text,
      finishReason: output.finishReason(request.maxTokens ?? settings.defaultMaxTokens),
      rawFinishReason: output.rawFinishReason,
      usage: output.usage(),
      provider: settings.provider,
    };
  }

  async function* deltas(
    request: ChatRequest,
    call: ChatCall,
    progress: StreamProgress,
  ): AsyncGenerator<string, StreamSummary, undefined> {
    const output = reader();
    for await (const response of responses(request, call, true)) {
      const delta = output.read(response);
      progress.id = output.id;
      progress.model = output.model || call.model;
      if (delta !== '') yield delta;
    }
    return {
      id: output.id,
      model: output.model || call.model,
      finishReason: output.finishReason(request.maxTokens ?? settings.defaultMaxTokens),
      rawFinishReason: output.rawFinishReason,
      usage: output.usage(),
    };
  }

  return wireChatModel(settings, config.contextWindow, {
    send: (request, _options, call) => send(request, call),
    deltas: (request, _options, call, progress) => deltas(request, call, progress),
  });
}

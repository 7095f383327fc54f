import {
  createTritonClient,
  ErrorCode,
  encodeBytesElements,
  InfergateError,
  type InferRequest,
  type InferResponse,
  type InferTransport,
  type TritonClient,
} from '@infergate/core';
import { generateModel, startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { formatChatPrompt } from './prompt-format.js';
import { createTritonChatModel } from './triton-chat-model.js';
import type { ChatStreamEvent } from './types.js';

let server: TestServer;
let client: TritonClient;

beforeAll(async () => {
  server = await startTestServer({ models: [generateModel({ name: 'generate_batched', maxBatchSize: 8 })] });
  client = createTritonClient({ url: server.url });
});
beforeEach(() => server.reset());
afterAll(async () => {
  await client.close();
  await server.stop();
});

const messages = [{ role: 'user' as const, content: 'tell me a story' }];
const lastUser = (list: readonly { content: string }[]) => list.at(-1)?.content ?? '';

async function collect(stream: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const texts = (events: ChatStreamEvent[]) =>
  events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : []));

describe('createTritonChatModel against the reference generate model', () => {
  it('chats (one response) with token counts and finish reason', async () => {
    const model = createTritonChatModel({
      client,
      model: 'generate',
      returnTokenCounts: true,
      returnFinishReason: true,
      formatPrompt: lastUser,
    });
    const response = await model.chat({ model: '', messages });
    expect(response).toMatchObject({
      model: 'generate',
      text: 'tell me a story',
      finishReason: 'stop',
      rawFinishReason: 'stop',
      provider: 'triton',
      usage: { inputTokens: 4, outputTokens: 4, cacheReadTokens: undefined },
    });
    expect(response.id).toMatch(/^chat-/);
  });

  it('streams one delta per word and bounds the reply with maxTokens', async () => {
    const model = createTritonChatModel({
      client,
      model: 'generate',
      returnTokenCounts: true,
      formatPrompt: lastUser,
    });
    const events = await collect(model.chatStream({ model: 'generate', messages, maxTokens: 3 }));
    expect(texts(events)).toEqual(['tell', ' me', ' a']);
    expect(events.at(-2)).toMatchObject({ type: 'usage', usage: { inputTokens: 4, outputTokens: 3 } });
    // No finish_reason output asked for: the count reaching maxTokens says 'length'.
    expect(events.at(-1)).toMatchObject({
      type: 'finish',
      finishReason: 'length',
      rawFinishReason: undefined,
    });
  });

  it('uses the default prompt format and leaves usage unknown when counts are not asked for', async () => {
    const model = createTritonChatModel({ client, model: 'generate' });
    const response = await model.chat({ model: 'generate', messages, maxTokens: 64 });
    expect(response.text).toBe(formatChatPrompt(messages).split(/\s+/).join(' '));
    expect(response.usage.inputTokens).toBeUndefined();
    expect(response.usage.outputTokens).toBeUndefined();
  });

  it('passes stop words as tensors, sampling_parameters JSON or request parameters', async () => {
    for (const samplingStyle of ['tensors', 'sampling-parameters', 'parameters'] as const) {
      const model = createTritonChatModel({
        client,
        model: 'generate',
        samplingStyle,
        formatPrompt: lastUser,
      });
      const response = await model.chat({ model: 'generate', messages, stop: ['a'], maxTokens: 10 });
      expect(response.text, samplingStyle).toBe('tell me');
    }
  });

  it('adds the batch dimension for batching models', async () => {
    const model = createTritonChatModel({
      client,
      model: 'generate_batched',
      batchDimension: true,
      returnTokenCounts: true,
      formatPrompt: lastUser,
    });
    expect(texts(await collect(model.chatStream({ model: '', messages })))).toEqual([
      'tell',
      ' me',
      ' a',
      ' story',
    ]);
    const unbatched = createTritonChatModel({ client, model: 'generate_batched', formatPrompt: lastUser });
    const error = await unbatched.chat({ model: '', messages }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).code).toBe(ErrorCode.InvalidArgument);
  });

  it('cancels the gRPC stream when the consumer leaves the loop early', async () => {
    const model = createTritonChatModel({
      client,
      model: 'generate',
      formatPrompt: lastUser,
      samplingStyle: 'tensors',
    });
    const request = { model: '', messages: [{ role: 'user' as const, content: 'a b c d e f g h i j' }] };
    let seen = 0;
    // 10 tokens, 200 ms apart: the break comes long before the natural end, however busy the machine.
    for await (const event of model.chatStream({ ...request, providerOptions: { delay_ms: 200 } })) {
      if (event.type === 'text-delta' && ++seen === 2) break;
    }
    await expect.poll(() => server.cancellations('generate')).toBe(1);
    // Nothing in flight: the execution has ended and can produce nothing more.
    await expect.poll(() => server.stats('generate').inFlight).toBe(0);
    expect(server.responses('generate')).toBeLessThan(10);
  });

  it('maps timeouts and unknown models', async () => {
    const model = createTritonChatModel({ client, model: 'generate', formatPrompt: lastUser, timeoutMs: 40 });
    const slow = await model
      .chat({ model: '', messages, providerOptions: { delay_ms: 60_000 } })
      .catch((caught: unknown) => caught);
    expect((slow as InfergateError).code).toBe(ErrorCode.DeadlineExceeded);
    // Without the 40 ms default: on a busy machine even a NOT_FOUND answer can take longer than that.
    const patient = createTritonChatModel({ client, model: 'generate', formatPrompt: lastUser });
    const missing = await patient.chat({ model: 'nope', messages }).catch((caught: unknown) => caught);
    expect((missing as InfergateError).code).toBe(ErrorCode.NotFound);
  });
});

/** An in-memory decoupled model that answers with cumulative text, as older vLLM backends did. */
function cumulativeTransport(seen: InferRequest[]): InferTransport {
  const bytes = (name: string, values: string[]): InferResponse['outputs'][number] => ({
    name,
    datatype: 'BYTES',
    shape: [values.length],
    raw: encodeBytesElements(values),
  });
  return {
    infer: () => Promise.reject(new Error('decoupled only')),
    async *stream(request) {
      seen.push(request);
      for (const text of ['Hel', 'Hello', 'Hello, wor', 'Hello, world']) {
        yield {
          model: request.model,
          modelVersion: '1',
          id: request.id ?? '',
          parameters: {},
          outputs: [bytes('text_output', [text])],
        };
      }
      yield {
        model: request.model,
        modelVersion: '1',
        id: request.id ?? '',
        parameters: {},
        outputs: [bytes('finish_reason', ['length'])],
      };
    },
  };
}

describe('createTritonChatModel over any InferTransport', () => {
  it("turns cumulative text into deltas with textOutput: 'cumulative'", async () => {
    const seen: InferRequest[] = [];
    const model = createTritonChatModel({
      client: cumulativeTransport(seen),
      model: 'llm',
      textOutput: 'cumulative',
    });
    const events = await collect(model.chatStream({ model: '', messages, temperature: 0.5, maxTokens: 4 }));
    expect(texts(events)).toEqual(['Hel', 'lo', ', wor', 'ld']);
    expect(events.at(-1)).toMatchObject({ finishReason: 'length', rawFinishReason: 'length' });
    expect(
      seen[0]?.inputs.map((input) => `${input.name}:${input.datatype}[${input.shape.join(',')}]`),
    ).toEqual([
      'text_input:BYTES[1]',
      'max_tokens:INT32[1]',
      'temperature:FP32[1]',
      'stream:BOOL[1]',
      'exclude_input_in_output:BOOL[1]',
    ]);
  });
});

describe('createTritonChatModel options', () => {
  it('validates through parseOptions: INVALID_ARGUMENT naming each bad option', () => {
    expect(() =>
      createTritonChatModel({ client, samplingStyle: 'telepathy', defaultMaxTokens: -1 } as never),
    ).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/samplingStyle.*defaultMaxTokens/s),
      }),
    );
    expect(() => createTritonChatModel({} as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/client/) }),
    );
  });

  it('works over a client built with only a transport, and keeps upstream fields when adding context', async () => {
    const transportOnly = createTritonClient({ transport: client.transport });
    const model = createTritonChatModel({ client: transportOnly, model: 'generate' });
    const response = await model.chat({ model: 'generate', messages });
    expect(response.text.length).toBeGreaterThan(0);
    const failing: InferTransport = {
      infer: async () => {
        throw new InfergateError(ErrorCode.RateLimited, 'slow down', { retryAfterMs: 250, grpcCode: 8 });
      },
      stream: async function* () {
        yield* [];
        throw new InfergateError(ErrorCode.RateLimited, 'slow down', { retryAfterMs: 250, grpcCode: 8 });
      },
    };
    const error = await createTritonChatModel({ client: failing, model: 'm', decoupled: false })
      .chat({ model: 'm', messages })
      .catch((thrown: unknown) => thrown as InfergateError);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', model: 'm', retryAfterMs: 250, grpcCode: 8 });
  });
});

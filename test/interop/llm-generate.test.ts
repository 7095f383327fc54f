// @infergate/llm's createTritonChatModel against the decoupled `generate` model on a real Triton 2.51
// (PyTriton 0.7.0, CPU). `generate` echoes the words of the prompt's last line, one token per word,
// cut at max_tokens (default 16) and before any stop word; see triton_server.py and README.md.
// Uses the interop run's one Triton, started once for every file by global-setup.ts.
import { createTritonClient, ErrorCode, type TritonClient } from '@infergate/core';
import {
  type ChatModel,
  type ChatRequest,
  type ChatStreamEvent,
  createTritonChatModel,
  formatChatPrompt,
} from '@infergate/llm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logSize, printLogTailOnFailure, sharedTriton, waitForLog } from './shared-triton.js';
import { caught } from './triton-helpers.js';

let client: TritonClient;
/** With the access token for the restricted `logging` group (the cancellation tests read Triton's log). */
let admin: TritonClient;
/** The adapter's defaults: no token counts, no finish_reason output. */
let plain: ChatModel;
/** With `num_input_tokens` / `num_output_tokens` and `finish_reason`. */
let full: ChatModel;

beforeAll(() => {
  // Throws the start error with the server log tail if the shared Triton is not up: every test fails.
  const triton = sharedTriton();
  client = createTritonClient({ url: triton.grpcAddress, enableGpuIpc: false });
  admin = createTritonClient({
    url: triton.grpcAddress,
    enableGpuIpc: false,
    accessToken: triton.accessToken,
  });
  plain = createTritonChatModel({ client, model: 'generate' });
  full = createTritonChatModel({
    client,
    model: 'generate',
    returnTokenCounts: true,
    returnFinishReason: true,
  });
});

afterAll(async () => {
  await admin?.updateLogSettings({ log_verbose_level: 0 }).catch(() => {});
  await client?.close();
  await admin?.close();
});

printLogTailOnFailure();

const ask = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: '',
  messages: [
    { role: 'system', content: 'You repeat the last line.' },
    { role: 'user', content },
  ],
  ...extra,
});

/** Whitespace words of the prompt formatChatPrompt builds: the model's num_input_tokens. */
const promptWords = (request: ChatRequest) => formatChatPrompt(request.messages).split(/\s+/).length;

async function events(iterable: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = [];
  for await (const event of iterable) out.push(event);
  return out;
}

const deltas = (list: ChatStreamEvent[]) =>
  list.flatMap((event) => (event.type === 'text-delta' ? [event.text] : []));

const WORDS = 'alpha beta gamma delta epsilon zeta eta theta iota kappa';

describe('chat (stream=false: one response)', () => {
  it('returns the whole reply with the adapter defaults (usage unknown, finish stop)', async () => {
    const reply = await plain.chat(ask('one two three'));
    expect(reply.text).toBe('one two three');
    expect(reply.finishReason).toBe('stop');
    expect(reply.rawFinishReason).toBeUndefined();
    expect(reply.provider).toBe('triton');
    expect(reply.model).toBe('generate');
    expect(reply.id).toMatch(/^chat-[0-9a-f-]{36}$/); // Triton echoes the request id
    expect(reply.usage.inputTokens).toBeUndefined();
    expect(reply.usage.outputTokens).toBeUndefined();
  });

  it('reads num_input_tokens, num_output_tokens and finish_reason when asked', async () => {
    const request = ask('one two three', { temperature: 0.7 });
    const reply = await full.chat(request);
    expect(reply.text).toBe('one two three');
    expect(reply.finishReason).toBe('stop');
    expect(reply.rawFinishReason).toBe('stop');
    expect(reply.usage.inputTokens).toBe(promptWords(request));
    expect(reply.usage.outputTokens).toBe(3);
  });

  it('keeps the prompt in the output with excludeInputInOutput: false', async () => {
    const model = createTritonChatModel({ client, model: 'generate', excludeInputInOutput: false });
    const request = ask('one two');
    const reply = await model.chat(request);
    expect(reply.text).toBe(`${formatChatPrompt(request.messages)}one two`);
  });
});

describe('chatStream (stream=true: one response per token)', () => {
  it('yields the deltas in order, then one usage and one finish', async () => {
    const request = ask(WORDS);
    const list = await events(full.chatStream(request));
    const words = WORDS.split(' ');
    expect(deltas(list)).toEqual(words.map((word, index) => (index === 0 ? word : ` ${word}`)));
    expect(list.slice(0, words.length).every((event) => event.type === 'text-delta')).toBe(true);
    expect(list.slice(words.length).map((event) => event.type)).toEqual(['usage', 'finish']);
    const usage = list.at(-2);
    const finish = list.at(-1);
    // num_output_tokens (1 per response) is summed; num_input_tokens (on every response) is not.
    expect(usage).toMatchObject({
      type: 'usage',
      usage: { inputTokens: promptWords(request), outputTokens: words.length },
    });
    expect(finish).toMatchObject({ type: 'finish', finishReason: 'stop', rawFinishReason: 'stop' });
    expect(finish?.type === 'finish' && finish.id).toMatch(/^chat-/);
  });

  it('with the adapter defaults: same text, usage unknown, finish stop', async () => {
    const list = await events(plain.chatStream(ask('one two three')));
    expect(deltas(list)).toEqual(['one', ' two', ' three']);
    expect(list.map((event) => event.type)).toEqual([
      'text-delta',
      'text-delta',
      'text-delta',
      'usage',
      'finish',
    ]);
    expect(list[3]).toMatchObject({ usage: { inputTokens: undefined, outputTokens: undefined } });
    expect(list[4]).toMatchObject({ finishReason: 'stop', rawFinishReason: undefined });
  });

  it('decodes multi-byte UTF-8 deltas', async () => {
    const list = await events(plain.chatStream(ask('héllo wörld ✓ 日本')));
    expect(deltas(list).join('')).toBe('héllo wörld ✓ 日本');
  });
});

describe('maxTokens', () => {
  it('bounds chat; finish length from the model, and from the counts without finish_reason', async () => {
    const reply = await full.chat(ask(WORDS, { maxTokens: 3 }));
    expect(reply.text).toBe('alpha beta gamma');
    expect(reply.finishReason).toBe('length');
    expect(reply.usage.outputTokens).toBe(3);

    const countsOnly = createTritonChatModel({ client, model: 'generate', returnTokenCounts: true });
    const inferred = await countsOnly.chat(ask(WORDS, { maxTokens: 3 }));
    expect(inferred.text).toBe('alpha beta gamma');
    expect(inferred.rawFinishReason).toBeUndefined();
    expect(inferred.finishReason).toBe('length');
  });

  it('bounds chatStream to maxTokens deltas', async () => {
    const list = await events(full.chatStream(ask(WORDS, { maxTokens: 2 })));
    expect(deltas(list)).toEqual(['alpha', ' beta']);
    expect(list.at(-2)).toMatchObject({ usage: { outputTokens: 2 } });
    expect(list.at(-1)).toMatchObject({ finishReason: 'length', rawFinishReason: 'length' });
  });

  it('the model default (16) applies when no maxTokens is sent; defaultMaxTokens fills it in', async () => {
    const twenty = Array.from({ length: 20 }, (_, index) => `w${index}`).join(' ');
    const reply = await full.chat(ask(twenty));
    expect(reply.text.split(' ')).toHaveLength(16);
    expect(reply.finishReason).toBe('length');

    const capped = createTritonChatModel({ client, model: 'generate', defaultMaxTokens: 4 });
    expect((await capped.chat(ask(twenty))).text).toBe('w0 w1 w2 w3');
  });
});

describe('stop words', () => {
  it('cut chat before the first stop string (stop_words BYTES [n])', async () => {
    const reply = await full.chat(ask(WORDS, { stop: ['zzz', 'gamma'] }));
    expect(reply.text).toBe('alpha beta ');
    expect(reply.finishReason).toBe('stop');
    expect(reply.rawFinishReason).toBe('stop');
  });

  it('cut chatStream, also inside a word', async () => {
    const list = await events(full.chatStream(ask(WORDS, { stop: ['lt'] })));
    expect(deltas(list)).toEqual(['alpha', ' beta', ' gamma', ' de']);
    expect(list.at(-1)).toMatchObject({ finishReason: 'stop' });
  });

  it('a stop word at the very start gives an empty reply', async () => {
    const list = await events(full.chatStream(ask(WORDS, { stop: ['alpha'] })));
    expect(deltas(list)).toEqual([]);
    expect(list.map((event) => event.type)).toEqual(['usage', 'finish']);
    expect(list[0]).toMatchObject({ usage: { outputTokens: 0 } });
  });
});

describe('cancellation', () => {
  // providerOptions become request parameters; `delay_ms` makes `generate` sleep before each token.
  const slow = (count: number, delayMs: number) =>
    ask(WORDS.split(' ').slice(0, count).join(' '), { providerOptions: { delay_ms: delayMs } });

  // Proof that the RPC was cancelled comes from Triton's verbose log (server side), not a client clock.
  const CANCELLED_ON_TRITON = /Cancellation notification received for ModelStreamInferHandler/;
  async function withVerboseLog(body: (since: number) => Promise<void>): Promise<void> {
    await admin.updateLogSettings({ log_verbose_level: 1 });
    try {
      await body(logSize()); // only lines logged from here on count
    } finally {
      await admin.updateLogSettings({ log_verbose_level: 0 });
    }
  }

  it('leaving the loop early cancels the call on Triton', async () => {
    await withVerboseLog(async (since) => {
      const seen: string[] = [];
      for await (const event of plain.chatStream(slow(8, 150))) {
        if (event.type === 'text-delta') seen.push(event.text);
        break;
      }
      expect(seen).toEqual(['alpha']);
      expect(await waitForLog(CANCELLED_ON_TRITON, 15_000, since)).toBeDefined();
    });
  });

  it('an aborted signal rejects with CANCELLED and cancels the call on Triton', async () => {
    await withVerboseLog(async (since) => {
      const controller = new AbortController();
      const seen: string[] = [];
      const error = await caught(
        (async () => {
          for await (const event of plain.chatStream(slow(8, 150), { signal: controller.signal })) {
            if (event.type === 'text-delta') seen.push(event.text);
            if (seen.length === 2) controller.abort();
          }
        })(),
      );
      expect(error.code).toBe(ErrorCode.Cancelled);
      expect(seen).toEqual(['alpha', ' beta']);
      expect(await waitForLog(CANCELLED_ON_TRITON, 15_000, since)).toBeDefined();
    });
  });

  it('timeoutMs rejects a slow chat with DEADLINE_EXCEEDED', async () => {
    const error = await caught(plain.chat(slow(8, 150), { timeoutMs: 300 }));
    expect(error.code).toBe(ErrorCode.DeadlineExceeded);
  });

  it('the model serves again after the cancelled calls', async () => {
    // The single model instance finishes the abandoned generations first (≤ 3 × 1.2 s).
    const reply = await full.chat(ask('still here'), { timeoutMs: 10_000 });
    expect(reply.text).toBe('still here');
  });
});

describe('errors', () => {
  it('an unknown model is NOT_FOUND for chat and chatStream', async () => {
    const missing = createTritonChatModel({ client, model: 'no_such_llm' });
    const viaChat = await caught(missing.chat(ask('hi')));
    expect(viaChat.code).toBe(ErrorCode.NotFound);
    const viaStream = await caught(events(missing.chatStream(ask('hi'))));
    expect(viaStream.code).toBe(ErrorCode.NotFound);
    // A request's own model wins over the adapter's default.
    const named = await caught(plain.chat({ ...ask('hi'), model: 'no_such_llm' }));
    expect(named.code).toBe(ErrorCode.NotFound);
  });

  it("the model's own error (max_tokens < 1) surfaces as an InfergateError", async () => {
    const error = await caught(plain.chat(ask('hi', { maxTokens: 0 })));
    expect(error.message).toMatch(/max_tokens must be at least 1/);
    // A PyTriton callable's exception reaches the stream as a bare traceback: no wording to classify.
    expect(error.code).toBe(ErrorCode.Internal);
  });
});

import { heuristicTokens } from '@infergate/core';
/** A chat request as far as estimating needs it (structurally @infergate/llm's ChatRequest). */
export interface EstimatableRequest {
  model: string;
  messages: readonly { role: string; content: string }[];
  maxTokens?: number;
}

export interface TokenEstimate {
  inputTokens: number;
  /** `maxTokens`, or the default cap when the request sets none. */
  outputTokens: number;
  /** False when a real tokenizer counted the input; true for the padded character heuristic. */
  estimated: boolean;
  encoding: 'o200k_base' | 'cl100k_base' | 'heuristic';
}

type Encoding = 'o200k_base' | 'cl100k_base';
interface Tokenizer {
  encode(text: string, options?: { disallowedSpecial?: Set<string> }): number[];
  encodeChat(
    chat: readonly { role: string; content: string }[],
    model: 'gpt-4o' | 'gpt-4',
    options?: { disallowedSpecial?: Set<string> },
  ): number[];
}

/**
 * The encoding OpenAI uses for a model name: o200k_base for gpt-4o, gpt-4.1, gpt-4.5, gpt-5 and the
 * o-series; cl100k_base for gpt-4, gpt-4-turbo and gpt-3.5. Undefined for everything else.
 */
export function openAiEncoding(model: string): Encoding | undefined {
  const bare = model.slice(model.lastIndexOf('/') + 1);
  if (/^(?:gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o[1-9](?:-|$))/.test(bare)) return 'o200k_base';
  if (/^(?:gpt-4|gpt-3\.5|gpt-35)/.test(bare)) return 'cl100k_base';
  return undefined;
}

// User text that spells a special token ("<|endoftext|>") is counted as the plain text it is.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

// gpt-tokenizer is an optional peer dependency (its encodings are ~30 MB): installed, OpenAI models
// are counted exactly; absent, every model gets the padded heuristic. Each encoding is imported the
// first time it is needed (~150 ms); a failed import is remembered, so it is tried once.
const loading = new Map<Encoding, Promise<Tokenizer | undefined>>();

function loadTokenizer(encoding: Encoding): Promise<Tokenizer | undefined> {
  let promise = loading.get(encoding);
  if (!promise) {
    promise = (
      encoding === 'o200k_base'
        ? import('gpt-tokenizer/encoding/o200k_base')
        : import('gpt-tokenizer/encoding/cl100k_base')
    ).then(
      (module) => module as unknown as Tokenizer,
      () => undefined,
    );
    loading.set(encoding, promise);
  }
  return promise;
}

/**
 * Loads the tokenizers ahead of the first call (e.g. at startup), so no call waits for them.
 * Resolves false when `gpt-tokenizer` is not installed (estimates then use the heuristic).
 */
export async function preloadTokenizers(): Promise<boolean> {
  const loaded = await Promise.all([loadTokenizer('o200k_base'), loadTokenizer('cl100k_base')]);
  return loaded.every((tokenizer) => tokenizer !== undefined);
}

export { heuristicTokens };

/**
 * Input and output tokens of a chat request before it is sent. OpenAI-family models are counted
 * with gpt-tokenizer (chat framing included) when it is installed; others, and every model without
 * it, with the padded heuristic, `estimated: true`.
 */
export async function estimateTokens(
  request: EstimatableRequest,
  options: { defaultMaxOutputTokens?: number } = {},
): Promise<TokenEstimate> {
  const outputTokens = request.maxTokens ?? options.defaultMaxOutputTokens ?? 1024;
  const encoding = openAiEncoding(request.model);
  const tokenizer = encoding === undefined ? undefined : await loadTokenizer(encoding);
  if (encoding !== undefined && tokenizer !== undefined) {
    const chat = request.messages.map((message) => ({ role: message.role, content: message.content }));
    let inputTokens: number;
    try {
      inputTokens = tokenizer.encodeChat(
        chat,
        encoding === 'o200k_base' ? 'gpt-4o' : 'gpt-4',
        PLAIN_TEXT,
      ).length;
    } catch {
      // Text that collides with special tokens: count the plain text instead, plus framing.
      inputTokens = chat.reduce(
        (sum, message) => sum + tokenizer.encode(message.content, PLAIN_TEXT).length + 4,
        3,
      );
    }
    return { inputTokens, outputTokens, estimated: false, encoding };
  }
  return {
    inputTokens: heuristicTokens(request.messages),
    outputTokens,
    estimated: true,
    encoding: 'heuristic',
  };
}

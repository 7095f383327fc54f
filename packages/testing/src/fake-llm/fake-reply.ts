/** A chat request as the fake servers read it (either vendor's body). */
export interface FakeChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  /** The system prompt (Anthropic's top-level `system`, OpenAI's system messages). */
  system: string;
  maxTokens: number | undefined;
  stop: string[];
  stream: boolean;
  /** The raw body. */
  body: Record<string, unknown>;
}

/** Options both fake providers take. */
export interface FakeLlmOptions {
  /** The reply text, or a function of the request. @default `echo: <last user message>` */
  reply?: string | ((request: FakeChatRequest) => string);
  /** Pause between stream chunks, in ms. @default 0 */
  chunkDelayMs?: number;
  /** Only this key is accepted (401 otherwise). @default any key, or none */
  apiKey?: string;
  /** The model the response names. @default the request's model */
  responseModel?: string;
  /**
   * Extra headers on every answer (429s included), e.g. the provider's rate-limit headers; a
   * function gets the 1-based number of the request. @default none
   */
  responseHeaders?: Readonly<Record<string, string>> | ((call: number) => Readonly<Record<string, string>>);
}

/** Sets `options.responseHeaders` for the `call`-th request on `response`. */
export function setResponseHeaders(
  response: { setHeader(name: string, value: string): unknown },
  options: FakeLlmOptions,
  call: number,
): void {
  const headers =
    typeof options.responseHeaders === 'function' ? options.responseHeaders(call) : options.responseHeaders;
  for (const [name, value] of Object.entries(headers ?? {})) response.setHeader(name, value);
}

/** Whitespace-separated words: the fakes' deterministic "tokens". */
export function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : ''))
      .join('');
  }
  return '';
}

/** Reads an OpenAI or Anthropic chat body into one shape. */
export function readChatRequest(body: unknown): FakeChatRequest {
  const raw = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const messages = (Array.isArray(raw.messages) ? raw.messages : []).map((message: unknown) => {
    const m = (typeof message === 'object' && message !== null ? message : {}) as Record<string, unknown>;
    return { role: String(m.role ?? 'user'), content: contentText(m.content) };
  });
  const systemParts = messages
    .filter((message) => message.role === 'system')
    .map((message) => message.content);
  if (raw.system !== undefined) systemParts.unshift(contentText(raw.system));
  const maxTokens = raw.max_completion_tokens ?? raw.max_tokens;
  const stop = raw.stop ?? raw.stop_sequences;
  return {
    model: typeof raw.model === 'string' ? raw.model : '',
    messages,
    system: systemParts.join('\n'),
    maxTokens: typeof maxTokens === 'number' ? maxTokens : undefined,
    stop: Array.isArray(stop) ? stop.map(String) : typeof stop === 'string' ? [stop] : [],
    stream: raw.stream === true,
    body: raw,
  };
}

export interface FakeReply {
  /** The chunks a stream sends: the first word, then " word" for each next one. */
  chunks: string[];
  text: string;
  /** Words of every message, the system prompt included. */
  inputTokens: number;
  outputTokens: number;
  /** Cut by max tokens ('length') or ended ('stop'). */
  finish: 'stop' | 'length';
}

/** The deterministic reply to a request: its words, cut at a stop word or at max tokens. */
export function fakeReply(request: FakeChatRequest, options: FakeLlmOptions): FakeReply {
  const lastUser = [...request.messages].reverse().find((message) => message.role === 'user');
  const text =
    typeof options.reply === 'function'
      ? options.reply(request)
      : (options.reply ?? `echo: ${lastUser?.content ?? ''}`);
  let replyWords = words(text);
  let finish: 'stop' | 'length' = 'stop';
  const stopAt = replyWords.findIndex((word) => request.stop.includes(word));
  if (stopAt !== -1) replyWords = replyWords.slice(0, stopAt);
  if (request.maxTokens !== undefined && replyWords.length > request.maxTokens) {
    replyWords = replyWords.slice(0, request.maxTokens);
    finish = 'length';
  }
  const inputTokens =
    request.messages
      .filter((message) => message.role !== 'system')
      .reduce((sum, m) => sum + words(m.content).length, 0) + words(request.system).length;
  return {
    chunks: replyWords.map((word, index) => (index === 0 ? word : ` ${word}`)),
    text: replyWords.join(' '),
    inputTokens,
    outputTokens: replyWords.length,
    finish,
  };
}

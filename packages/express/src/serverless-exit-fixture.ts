// Child process of serverless-exit.test.ts: a Lambda-style handler over a lazily built gateway,
// invoked twice, then nothing more — no close(). The process must exit on its own.
import { createTritonClient } from '@infergate/core';
import { createOpenAIChatModel } from '@infergate/llm';
import type { Gateway } from './gateway.js';
import { createLazyGateway } from './serverless.js';
import { lambdaHandler } from './serverless-handlers.js';

const tritonUrl = process.env.TRITON_URL ?? '';
const openaiUrl = process.env.OPENAI_BASE_URL ?? '';

const gateway = createLazyGateway<Gateway>(() => ({
  triton: createTritonClient({ url: tritonUrl, timeoutMs: 5000 }),
  chat: createOpenAIChatModel({ baseURL: openaiUrl, apiKey: 'sk-test', defaultModel: 'gpt-4o-mini' }),
}));

const handler = lambdaHandler(gateway, async (event: { text: string }, { gateway, timeoutMs, coldStart }) => {
  const triton = gateway.triton;
  const chat = gateway.chat;
  if (triton === undefined || chat === undefined) throw new Error('incomplete gateway');
  const echoed = await triton.infer(
    'identity',
    [{ name: 'INPUT0', datatype: 'BYTES', shape: [1], data: [event.text] }],
    timeoutMs === undefined ? {} : { timeoutMs },
  );
  let streamed = '';
  for await (const part of chat.chatStream({
    model: '',
    messages: [{ role: 'user', content: event.text }],
  })) {
    if (part.type === 'text-delta') streamed += part.text;
  }
  return { coldStart, echoed: echoed.output('OUTPUT0').strings()[0], streamed };
});

const context = { awsRequestId: 'req-1', getRemainingTimeInMillis: () => 10_000 };
const first = await handler({ text: 'cold start' }, context);
const second = await handler({ text: 'warm start' }, context);
console.log(`RESULT ${JSON.stringify({ first, second, builds: gateway.builds })}`);

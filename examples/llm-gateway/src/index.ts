// Run: node_modules/.bin/tsx --conditions=source examples/llm-gateway/src/index.ts
// Starts the reference Triton server (its `generate` model stands in for a vLLM / TensorRT-LLM
// model) and fake OpenAI / Anthropic servers, injects failures, and prints the fallbacks and spend.
import { startFakeAnthropic, startFakeOpenAI, startTestServer } from '@infergate/testing';
import { runDemo } from './demo.js';
import { createLlmGateway } from './gateway.js';

const [triton, openai, anthropic] = await Promise.all([
  startTestServer(),
  startFakeOpenAI(),
  startFakeAnthropic(),
]);
const gateway = createLlmGateway({
  tritonUrl: triton.url,
  openai: { baseURL: openai.url, apiKey: 'sk-fake' },
  anthropic: { baseURL: anthropic.url, apiKey: 'sk-ant-fake' },
  dailyBudgetUsd: 1,
  tenantBudgetsUsd: { tiny: 0.000001 },
});
await runDemo(gateway, { triton, openai, anthropic }, console.log);
await gateway.close();
await Promise.all([triton.stop(), openai.close(), anthropic.close()]);

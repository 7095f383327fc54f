import {
  type FakeLlmServer,
  startFakeAnthropic,
  startFakeOpenAI,
  startTestServer,
  type TestServer,
} from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemo } from './demo.js';
import { createLlmGateway, type LlmGateway } from './gateway.js';

let triton: TestServer;
let openai: FakeLlmServer;
let anthropic: FakeLlmServer;
let gateway: LlmGateway;

beforeAll(async () => {
  [triton, openai, anthropic] = await Promise.all([
    startTestServer(),
    startFakeOpenAI(),
    startFakeAnthropic(),
  ]);
  gateway = createLlmGateway({
    tritonUrl: triton.url,
    openai: { baseURL: openai.url, apiKey: 'sk-test' },
    anthropic: { baseURL: anthropic.url, apiKey: 'sk-ant-test' },
    dailyBudgetUsd: 1,
    tenantBudgetsUsd: { tiny: 0.000001 },
  });
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([triton.stop(), openai.close(), anthropic.close()]);
});

describe('llm-gateway example', () => {
  it('falls back Triton → OpenAI → Anthropic on injected failures and reports the spend', async () => {
    const lines: string[] = [];
    const { steps, report } = await runDemo(gateway, { triton, openai, anthropic }, (line) =>
      lines.push(line),
    );
    expect(
      steps.map(({ step, outcome, fallbacks }) => ({ step, outcome, fallbacks: fallbacks.length })),
    ).toEqual([
      { step: 'healthy', outcome: 'triton', fallbacks: 0 },
      { step: 'triton down', outcome: 'openai', fallbacks: 1 },
      { step: 'triton and openai down', outcome: 'anthropic', fallbacks: 2 },
      { step: 'stream falls back before its first chunk', outcome: 'openai', fallbacks: 1 },
      { step: 'tenant over budget', outcome: 'BUDGET_EXCEEDED', fallbacks: 0 },
    ]);
    expect(steps[2]?.text).toBe('echo: two backends fail');
    expect(steps[3]?.text).toBe('echo: streaming still works');

    // Only answered attempts are charged, each at its own backend's price; the refused tenant pays nothing.
    const byProvider = Object.fromEntries(report.rows.map((row) => [row.provider, row]));
    expect(byProvider.triton).toMatchObject({ tenant: 'acme', model: 'generate', calls: 1 });
    expect(byProvider.openai).toMatchObject({ tenant: 'acme', model: 'gpt-4o-mini', calls: 2 });
    expect(byProvider.anthropic).toMatchObject({ tenant: 'acme', model: 'claude-haiku-4-5', calls: 1 });
    expect(report.rows.every((row) => row.costUsd > 0)).toBe(true);
    expect(report.rows.some((row) => row.tenant === 'tiny')).toBe(false);
    expect(report.totalUsd).toBeCloseTo(
      report.rows.reduce((sum, row) => sum + row.costUsd, 0),
      12,
    );
    expect(lines.at(-1)).toMatch(/^total \$0\.\d{8}$/);
  });
});

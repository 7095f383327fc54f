import { InfergateError } from '@infergate/core';
import type { SpendReport } from '@infergate/cost';
import type { FakeLlmServer, TestServer } from '@infergate/testing';
import type { LlmGateway } from './gateway.js';

export interface DemoServers {
  triton: TestServer;
  openai: FakeLlmServer;
  anthropic: FakeLlmServer;
}

export interface DemoStep {
  step: string;
  /** The router target that answered, or the error code. */
  outcome: string;
  text?: string;
  fallbacks: string[];
}

export interface DemoResult {
  steps: DemoStep[];
  report: SpendReport;
}

const ask = (content: string) => ({
  model: '',
  messages: [{ role: 'user' as const, content }],
  maxTokens: 64,
});

/** Calls the gateway while failures are injected into its backends, then reads the spend report. */
export async function runDemo(
  gateway: LlmGateway,
  servers: DemoServers,
  log: (line: string) => void = () => {},
): Promise<DemoResult> {
  const steps: DemoStep[] = [];
  let fallbacks: string[] = [];
  let answeredBy = '';
  gateway.chat.on('fallback', ({ from, to, error }) => fallbacks.push(`${from} → ${to} (${error.code})`));
  gateway.chat.on('attempt', ({ target, outcome }) => {
    if (outcome === 'success') answeredBy = target;
  });

  async function step(name: string, tenant: string, content: string, stream = false): Promise<void> {
    fallbacks = [];
    answeredBy = '';
    let result: DemoStep;
    try {
      if (stream) {
        let text = '';
        for await (const event of gateway.chat.chatStream(ask(content), { tenant }))
          if (event.type === 'text-delta') text += event.text;
        result = { step: name, outcome: answeredBy, text, fallbacks };
      } else {
        const answer = await gateway.chat.chat(ask(content), { tenant });
        result = { step: name, outcome: answeredBy, text: answer.text, fallbacks };
      }
    } catch (error) {
      result = { step: name, outcome: InfergateError.from(error).code, fallbacks };
    }
    steps.push(result);
    log(`${name}: ${result.outcome}${result.text === undefined ? '' : ` "${result.text}"`}`);
    for (const fallback of result.fallbacks) log(`  fallback ${fallback}`);
  }

  await step('healthy', 'acme', 'all backends are up');

  servers.triton.faults.set('generate', { code: 'UNAVAILABLE', message: 'GPU node drained', times: 1 });
  await step('triton down', 'acme', 'the self-hosted model fails');

  servers.triton.faults.set('generate', { code: 'UNAVAILABLE', message: 'GPU node drained', times: 1 });
  servers.openai.setFault({ kind: 'server-error', status: 503, times: 1 });
  await step('triton and openai down', 'acme', 'two backends fail');

  servers.triton.faults.set('generate', { code: 'UNAVAILABLE', message: 'GPU node drained', times: 1 });
  await step('stream falls back before its first chunk', 'acme', 'streaming still works', true);

  await step('tenant over budget', 'tiny', 'this tenant has no money left');

  const report = await gateway.costs.report({ groupBy: ['tenant', 'provider', 'model'] });
  for (const row of report.rows)
    log(
      `spend ${row.tenant} ${row.provider} ${row.model}: $${row.costUsd.toFixed(8)} ` +
        `(${row.calls} calls, ${row.inputTokens} in / ${row.outputTokens} out)`,
    );
  log(`total $${report.totalUsd.toFixed(8)}`);
  return { steps, report };
}

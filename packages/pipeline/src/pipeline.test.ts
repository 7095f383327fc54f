// Runs against real servers on 127.0.0.1: the reference Triton-compatible server (@infergate/testing,
// real gRPC) and the fake OpenAI HTTP server with @infergate/llm's OpenAI client.
import { createMicroBatcher } from '@infergate/batcher';
import { createTritonClient, type InfergateError, sleep, type TritonClient } from '@infergate/core';
import { createOpenAIChatModel } from '@infergate/llm';
import { createRouter } from '@infergate/router';
import { type FakeLlmServer, startFakeOpenAI, startTestServer, type TestServer } from '@infergate/testing';
import { context as otelContext, trace } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { installInMemoryTracing } from '../../../test/unit/otel.js';
import { llmStep } from './llm-step.js';
import { createPipeline } from './pipeline.js';
import type { StepCost } from './pipeline-options.js';
import type { Tensor } from './port-type.js';
import { functionStep } from './step.js';
import { tritonStep } from './triton-step.js';

let server: TestServer;
let llm: FakeLlmServer;
let client: TritonClient;

beforeAll(async () => {
  server = await startTestServer();
  llm = await startFakeOpenAI({ reply: (request) => `explained: ${request.messages.at(-1)?.content ?? ''}` });
  client = createTritonClient({ url: server.url, enableGpuIpc: false });
});
afterEach(() => llm.reset());
afterAll(async () => {
  await client.close();
  await llm.close();
  await server.stop();
});

const fp32 = (values: number[]): Tensor => ({
  datatype: 'FP32',
  shape: [1, values.length],
  data: Float32Array.from(values),
});
const chat = () => createOpenAIChatModel({ apiKey: 'test-key', baseURL: llm.url });

/** preprocess (identity) → classify (add_sub: x + 1) → explain (LLM), with a fallback on explain. */
function classifyAndExplain(options: { fallback?: boolean; costs?: StepCost[]; tracing?: boolean } = {}) {
  const batcher = createMicroBatcher(client.transport, { client, maxQueueDelayMs: 0 });
  return {
    batcher,
    pipeline: createPipeline({
      name: 'classify-and-explain',
      inputs: { pixels: { kind: 'tensor', datatype: 'FP32', shape: [1, 16] } },
      steps: {
        preprocess: {
          // Through a batcher: per-step transport.
          step: tritonStep({
            transport: batcher,
            model: 'identity',
            inputs: { INPUT0: { datatype: 'FP32', shape: [-1, -1] } },
            outputs: { OUTPUT0: { datatype: 'FP32', shape: [-1, -1] } },
            usdPerGpuHour: 3.6,
          }),
          inputs: { INPUT0: 'input.pixels' },
        },
        classify: {
          // Straight to the endpoint.
          step: tritonStep({
            transport: client.transport,
            model: 'add_sub',
            inputs: {
              INPUT0: { datatype: 'FP32', shape: [-1, 16] },
              INPUT1: { datatype: 'FP32', shape: [-1, 16] },
            },
            outputs: { OUTPUT0: { datatype: 'FP32', shape: [-1, 16] } },
          }),
          inputs: {
            INPUT0: 'preprocess.OUTPUT0',
            INPUT1: {
              from: 'input.pixels',
              map: () => fp32(Array(16).fill(1)),
              type: { kind: 'tensor', datatype: 'FP32', shape: [1, 16] },
            },
          },
        },
        label: {
          step: functionStep({
            inputs: { scores: { kind: 'tensor', datatype: 'FP32' } },
            outputs: { label: { kind: 'text' }, top: { kind: 'json' } },
            run: async ({ scores }) => {
              const data = Array.from((scores as Tensor).data as Float32Array);
              const best = data.indexOf(Math.max(...data));
              return { outputs: { label: `class-${best}`, top: { index: best, score: data[best] } } };
            },
          }),
          inputs: { scores: 'classify.OUTPUT0' },
        },
        explain: {
          step: llmStep({
            model: chat(),
            modelName: 'gpt-4o-mini',
            inputs: { label: { kind: 'text' }, score: { kind: 'json' } },
            prompt: ({ label, score }) => `why ${String(label)} at ${String(score)}`,
            pricing: { inputUsdPerMillionTokens: 1_000_000, outputUsdPerMillionTokens: 2_000_000 },
          }),
          inputs: { label: 'label.label', score: 'label.top.score' },
          ...(options.fallback === true ? { fallback: () => ({ text: 'no explanation', usage: {} }) } : {}),
        },
      },
      outputs: { label: 'label.label', explanation: 'explain.text', top: 'label.top' },
      ...(options.costs === undefined ? {} : { onCost: (entry: StepCost) => options.costs?.push(entry) }),
      ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
    }),
  };
}

const pixels = fp32(Array.from({ length: 16 }, (_, index) => (index === 5 ? 9 : index / 100)));

describe('a pipeline across two Triton models and one LLM step', () => {
  it('maps tensors and fields between steps and returns the outputs, with cost per step and tenant', async () => {
    const costs: StepCost[] = [];
    const { pipeline, batcher } = classifyAndExplain({ costs });
    try {
      const result = await pipeline.run({ pixels }, { tenant: 'acme', timeoutMs: 30_000 });
      expect(result.outputs.label).toBe('class-5');
      expect(result.outputs.top).toEqual({ index: 5, score: 10 });
      expect(result.outputs.explanation).toBe('explained: why class-5 at 10');
      expect(
        Object.fromEntries(Object.entries(result.steps).map(([name, report]) => [name, report.status])),
      ).toEqual({
        preprocess: 'ok',
        classify: 'ok',
        label: 'ok',
        explain: 'ok',
      });
      // The fake counts whitespace-separated words as tokens: 4 in, 5 out.
      expect(result.steps.explain?.costUsd).toBe(4 * 1 + 5 * 2);
      expect(result.steps.preprocess?.costUsd).toBeGreaterThan(0);
      expect(result.costUsd).toBeCloseTo(14 + (result.steps.preprocess?.costUsd ?? 0), 10);
      expect(costs.map((entry) => [entry.step, entry.tenant])).toEqual([
        ['preprocess', 'acme'],
        ['explain', 'acme'],
      ]);
      expect(batcher.stats().items).toBe(1);
    } finally {
      await batcher.close();
    }
  });

  it('a failed step with a fallback uses the fallback; the run succeeds', async () => {
    const { pipeline, batcher } = classifyAndExplain({ fallback: true });
    llm.setFault({ kind: 'server-error', status: 500 });
    try {
      const result = await pipeline.run({ pixels });
      expect(result.outputs.explanation).toBe('no explanation');
      expect(result.steps.explain?.status).toBe('fallback');
      expect(llm.calls).toBe(1);
    } finally {
      await batcher.close();
    }
  });

  it('a failed step without a fallback fails the run with its error and the step named', async () => {
    const { pipeline, batcher } = classifyAndExplain();
    llm.setFault({ kind: 'server-error', status: 500 });
    try {
      const error = (await pipeline.run({ pixels }).catch((caught: unknown) => caught)) as InfergateError;
      expect(error.code).toBe('UNAVAILABLE');
      expect(error.message).toContain("pipeline 'classify-and-explain': step 'explain' failed");
      expect(error.details?.step).toBe('explain');
    } finally {
      await batcher.close();
    }
  });

  it('one deadline for the whole run: a hanging LLM step ends it with DEADLINE_EXCEEDED and its request is aborted', async () => {
    const { pipeline, batcher } = classifyAndExplain({ fallback: true });
    llm.setFault({ kind: 'slow-first-byte', delayMs: 120_000 });
    try {
      // Generous for the two Triton calls on a busy machine, far below the LLM's 120 s.
      const error = (await pipeline
        .run({ pixels }, { timeoutMs: 5_000 })
        .catch((caught: unknown) => caught)) as InfergateError;
      expect(error.code).toBe('DEADLINE_EXCEEDED');
      expect(error.message).toContain("pipeline 'classify-and-explain'");
      expect(error.message).toContain('steps not finished: explain');
      // The deadline is not the step's failure: its fallback does not run.
      expect(error.details?.steps).toMatchObject({ explain: { status: 'cancelled' } });
      await expect.poll(() => llm.disconnects, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    } finally {
      await batcher.close();
    }
  });

  it('cancelling the run aborts the running LLM call', async () => {
    const { pipeline, batcher } = classifyAndExplain();
    llm.setFault({ kind: 'slow-first-byte', delayMs: 120_000 });
    const controller = new AbortController();
    try {
      const running = pipeline
        .run({ pixels }, { signal: controller.signal })
        .catch((caught: unknown) => caught);
      await expect.poll(() => llm.calls, { timeout: 10_000 }).toBe(1);
      controller.abort();
      const error = (await running) as InfergateError;
      expect(error.code).toBe('CANCELLED');
      await expect.poll(() => llm.disconnects, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    } finally {
      await batcher.close();
    }
  });
});

describe('per-step transport', () => {
  it('a step through a router, next to a step straight to the endpoint', async () => {
    // The router owns its targets' transports (close() closes them): give it a client of its own.
    const routed = createTritonClient({ url: server.url, enableGpuIpc: false });
    const router = createRouter({ targets: [{ name: 'primary', transport: routed.transport }] });
    const step = (transport: typeof client.transport) =>
      tritonStep({
        transport,
        model: 'identity',
        inputs: { INPUT0: { datatype: 'FP32' } },
        outputs: { OUTPUT0: { datatype: 'FP32' } },
      });
    const pipeline = createPipeline({
      name: 'transports',
      inputs: { x: { kind: 'tensor', datatype: 'FP32' } },
      steps: {
        routed: { step: step(router), inputs: { INPUT0: 'input.x' } },
        direct: { step: step(client.transport), inputs: { INPUT0: 'routed.OUTPUT0' } },
      },
      outputs: { y: 'direct.OUTPUT0' },
    });
    try {
      const before = server.calls.length;
      const result = await pipeline.run({ x: fp32([7, 8]) });
      expect(Array.from((result.outputs.y as Tensor).data as Float32Array)).toEqual([7, 8]);
      expect(server.calls.slice(before).map((call) => call.model)).toEqual(['identity', 'identity']);
    } finally {
      await router.close();
      await routed.close();
    }
  });
});

describe('concurrency and failure', () => {
  it('runs independent steps at once', async () => {
    // Each branch waits until the other has started: run one after the other, this deadlocks and the
    // deadline fails the test.
    let startLeft!: () => void;
    let startRight!: () => void;
    const leftStarted = new Promise<void>((resolve) => (startLeft = resolve));
    const rightStarted = new Promise<void>((resolve) => (startRight = resolve));
    const branch = (mine: () => void, theirs: Promise<void>) =>
      functionStep({
        inputs: {},
        outputs: { done: { kind: 'json' } },
        run: async () => {
          mine();
          await theirs;
          return { outputs: { done: true } };
        },
      });
    const pipeline = createPipeline({
      name: 'fan-out',
      steps: {
        left: { step: branch(startLeft, rightStarted) },
        right: { step: branch(startRight, leftStarted) },
      },
      outputs: { left: 'left.done', right: 'right.done' },
    });
    expect((await pipeline.run({}, { timeoutMs: 10_000 })).outputs).toEqual({ left: true, right: true });
  });

  it('a failing branch cancels the running one and the steps after it', async () => {
    llm.setFault({ kind: 'slow-first-byte', delayMs: 120_000 });
    const pipeline = createPipeline({
      name: 'fail-fast',
      inputs: { pixels: { kind: 'tensor', datatype: 'FP32' } },
      steps: {
        slow: {
          step: llmStep({ model: chat(), modelName: 'm', inputs: {}, prompt: () => 'hello' }),
        },
        after: {
          step: functionStep({
            inputs: { text: { kind: 'text' } },
            outputs: {},
            run: async () => ({ outputs: {} }),
          }),
          inputs: { text: 'slow.text' },
        },
        // Waits until the LLM call has reached its server, so the failure below finds it running.
        gate: {
          step: functionStep({
            inputs: { pixels: { kind: 'tensor', datatype: 'FP32' } },
            outputs: { pixels: { kind: 'tensor', datatype: 'FP32' } },
            run: async ({ pixels: value }, { signal }) => {
              for (let waited = 0; llm.calls === 0 && waited < 10_000; waited += 20) await sleep(20, signal);
              return { outputs: { pixels: value } };
            },
          }),
          inputs: { pixels: 'input.pixels' },
        },
        broken: {
          step: tritonStep({
            transport: client.transport,
            model: 'fail',
            inputs: { INPUT0: { datatype: 'FP32' } },
            outputs: { OUTPUT0: { datatype: 'FP32' } },
          }),
          inputs: { INPUT0: 'gate.pixels' },
        },
      },
      outputs: {},
    });
    const error = (await pipeline
      .run({ pixels }, { timeoutMs: 60_000 })
      .catch((caught: unknown) => caught)) as InfergateError;
    expect(llm.calls).toBe(1);
    expect(error.message).toContain("step 'broken' failed");
    expect(error.details?.steps).toMatchObject({
      broken: { status: 'failed' },
      slow: { status: 'cancelled' },
      after: { status: 'cancelled' },
    });
    await expect.poll(() => llm.disconnects, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
  });

  it('refuses run inputs of the wrong type before running anything', async () => {
    const { pipeline, batcher } = classifyAndExplain();
    try {
      await expect(pipeline.run({ pixels: 'not a tensor' })).rejects.toThrow(
        "pipeline 'classify-and-explain': input 'pixels': expected a tensor",
      );
      await expect(pipeline.run({ pixels: fp32([1, 2]) })).rejects.toThrow(
        'shape [1, 2] does not fit [1, 16]',
      );
      expect(llm.calls).toBe(0);
    } finally {
      await batcher.close();
    }
  });
});

describe('tracing', () => {
  it('one span per run, a child span per step, the Triton RPC spans under their step', async () => {
    const tracing = installInMemoryTracing();
    const { pipeline, batcher } = classifyAndExplain();
    try {
      await pipeline.run({ pixels }, { tenant: 'acme' });
      const spans = tracing.exporter.getFinishedSpans();
      const run = spans.find((span) => span.name === 'pipeline classify-and-explain');
      expect(run?.attributes['infergate.tenant']).toBe('acme');
      const steps = spans.filter((span) => span.name.startsWith('pipeline.step '));
      expect(steps.map((span) => span.name).sort()).toEqual([
        'pipeline.step classify',
        'pipeline.step explain',
        'pipeline.step label',
        'pipeline.step preprocess',
      ]);
      for (const step of steps) expect(step.parentSpanContext?.spanId).toBe(run?.spanContext().spanId);
      const classify = steps.find((span) => span.name === 'pipeline.step classify');
      const rpc = spans.find(
        (span) => span.name.endsWith('/ModelInfer') && span.attributes['infergate.model'] !== 'identity',
      );
      expect(rpc?.parentSpanContext?.spanId).toBe(classify?.spanContext().spanId);
    } finally {
      await batcher.close();
      tracing.uninstall();
    }
  });

  it('tracing: false opens no pipeline or step span; the steps’ RPC spans sit under the caller’s span', async () => {
    const tracing = installInMemoryTracing();
    const { pipeline, batcher } = classifyAndExplain({ tracing: false });
    try {
      const caller = trace.getTracer('test').startSpan('caller');
      const result = await otelContext.with(trace.setSpan(otelContext.active(), caller), () =>
        pipeline.run({ pixels }, { tenant: 'acme' }),
      );
      caller.end();
      expect(result.outputs.label).toBe('class-5');
      const spans = tracing.exporter.getFinishedSpans();
      expect(spans.filter((span) => span.name.startsWith('pipeline'))).toEqual([]);
      const rpc = spans.find(
        (span) => span.name.endsWith('/ModelInfer') && span.attributes['infergate.model'] !== 'identity',
      );
      expect(rpc?.parentSpanContext?.spanId).toBe(caller.spanContext().spanId);
    } finally {
      await batcher.close();
      tracing.uninstall();
    }
  });
});

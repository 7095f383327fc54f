import { createTritonClient, type TritonClient } from '@infergate/core';
import { createOpenAIChatModel } from '@infergate/llm';
import { type FakeLlmServer, startFakeOpenAI, startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClassifyPipeline } from './pipeline.js';
import { installTracing, spanTree } from './tracing.js';

let tracing: ReturnType<typeof installTracing>;
let server: TestServer;
let llm: FakeLlmServer;
let client: TritonClient;

beforeAll(async () => {
  tracing = installTracing();
  server = await startTestServer();
  llm = await startFakeOpenAI({ reply: 'strongest feature wins' });
  client = createTritonClient({ url: server.url });
});
afterEach(() => llm.reset());
afterAll(async () => {
  await client.close();
  await llm.close();
  await server.stop();
  await tracing.uninstall();
});

const records = (values: string[]) => ({
  records: { datatype: 'BYTES' as const, shape: [values.length], data: values },
});
const pipeline = () =>
  createClassifyPipeline({
    triton: client.transport,
    chat: createOpenAIChatModel({ apiKey: 'test-key', baseURL: llm.url }),
    chatModel: 'gpt-4o-mini',
  });

describe('pipeline example', () => {
  it('preprocess and classify on Triton, then an LLM explanation', async () => {
    const result = await pipeline().run(records(['1,2,3', '10,20,30,40', '0.25,9']));
    expect(result.outputs).toEqual({
      labels: ['class-2', 'class-3', 'class-1'],
      explanation: 'strongest feature wins',
    });
    expect(llm.requests[0]?.body).toMatchObject({
      messages: [{ role: 'user', content: 'In one sentence, explain these labels: class-2 class-3 class-1' }],
    });
  });

  it('falls back when the LLM fails: the labels still come back', async () => {
    llm.setFault({ kind: 'server-error', status: 503 });
    const result = await pipeline().run(records(['5,1']));
    expect(result.outputs.labels).toEqual(['class-0']);
    expect(result.outputs.explanation).toMatch(/^\(no explanation: /);
    expect(result.steps.explain?.status).toBe('fallback');
  });

  it('puts every step and every call in one trace, carried to the server as traceparent', async () => {
    await pipeline().run(records(['4,5']));
    const run = tracing.spans().findLast((span) => span.name === 'pipeline classify-and-explain');
    const traceId = run?.spanContext().traceId;
    const spans = tracing.spans().filter((span) => span.spanContext().traceId === traceId);
    expect(spanTree(spans).filter((line) => !line.includes('chat') && !line.includes('POST'))).toEqual([
      'pipeline classify-and-explain',
      '  pipeline.step preprocess',
      '    inference.GRPCInferenceService/ModelInfer',
      '  pipeline.step features',
      '  pipeline.step classify',
      '    inference.GRPCInferenceService/ModelInfer',
      '  pipeline.step label',
      '  pipeline.step explain',
    ]);
    const received = server.calls.filter(
      (call) => traceId !== undefined && call.metadata.traceparent?.includes(traceId),
    );
    expect(received.map((call) => call.model)).toEqual(['identity', 'add_sub']);
  });
});

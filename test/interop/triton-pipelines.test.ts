// Server-side and client-side pipelines on the interop run's one real Triton 2.51 (PyTriton 0.7.0,
// CPU): the models of examples/triton-models (two Python models, an ensemble of them, a decoupled BLS
// model calling them) are in the server's repository (triton_server.py copies them there: an
// ensemble's composing models must be in a repository); each config.pbtxt is parsed and linted and
// loaded again as a config override, and the models are called through the SDK. Then
// @infergate/pipeline runs a DAG across the two models and an LLM step (fake OpenAI over HTTP).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTritonClient, type InfergateError, type TritonClient } from '@infergate/core';
import { createOpenAIChatModel } from '@infergate/llm';
import { lintModelConfig, modelConfigToJson, parseModelConfig } from '@infergate/model-config';
import { createPipeline, llmStep, type Tensor, tritonStep } from '@infergate/pipeline';
import { type FakeLlmServer, startFakeOpenAI } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printLogTailOnFailure, sharedTriton } from './shared-triton.js';
import { INTEROP_DIR } from './triton-harness.js';

const REPOSITORY = join(INTEROP_DIR, '..', '..', 'examples', 'triton-models');
// Dependencies first: the ensemble and the BLS model call the other two.
const MODELS = ['preprocess', 'classify', 'classify_ensemble', 'classify_bls'];

let client: TritonClient;
let llm: FakeLlmServer;

printLogTailOnFailure();

beforeAll(async () => {
  client = createTritonClient({ url: sharedTriton().grpcAddress, enableGpuIpc: false });
  llm = await startFakeOpenAI({ reply: 'the highest score wins' });
  for (const model of MODELS) {
    const config = parseModelConfig(
      readFileSync(join(REPOSITORY, model, 'config.pbtxt'), 'utf8'),
      `${model}/config.pbtxt`,
    );
    expect(
      lintModelConfig(config, { streamingClient: true, gpus: 0 }).filter((f) => f.severity === 'error'),
    ).toEqual([]);
    await client.loadModel(model, { config: modelConfigToJson(config) });
    expect((await client.modelConfig(model)).name).toBe(model);
  }
});

afterAll(async () => {
  await client?.close();
  await llm?.close();
});

const raw = (values: number[]) => [
  { name: 'RAW', datatype: 'FP32' as const, shape: [values.length], data: values },
];

describe('examples/triton-models on real Triton', () => {
  it('the ensemble runs preprocess then classify on the server', async () => {
    const result = await client.infer('classify_ensemble', raw([2, 8, 4]));
    expect(result.output('SCORES').toArray()).toEqual([2, 5, 3]);
    expect(result.output('LABEL').toArray()).toEqual([1]);
  });

  it('the BLS model calls both models and streams one response per stage (decoupled)', async () => {
    const stages: [string, unknown[]][] = [];
    for await (const response of client.inferStream('classify_bls', raw([2, 8, 4]))) {
      if (response.outputs.length === 0) continue; // the empty final-flag response
      stages.push([response.output('STAGE').strings()[0] ?? '', response.output('VALUES').toArray()]);
    }
    expect(stages).toEqual([
      ['preprocess', [1, 4, 2]],
      ['classify', [2, 5, 3]],
    ]);
  });

  it('the BLS model refuses a plain (non-streaming) infer, as the lint rule warns', async () => {
    const config = await client.modelConfig('classify_bls');
    expect(lintModelConfig(config, { streamingClient: false }).map((finding) => finding.rule)).toContain(
      'decoupled-without-streaming',
    );
    await expect(client.infer('classify_bls', raw([1]))).rejects.toMatchObject({ name: 'InfergateError' });
  });
});

describe('a client-side pipeline across two Triton models and an LLM', () => {
  const build = () =>
    createPipeline({
      name: 'triton-then-llm',
      inputs: { raw: { kind: 'tensor', datatype: 'FP32', shape: [-1] } },
      steps: {
        preprocess: {
          step: tritonStep({
            transport: client.transport,
            model: 'preprocess',
            inputs: { RAW: { datatype: 'FP32', shape: [-1] } },
            outputs: { FEATURES: { datatype: 'FP32', shape: [-1] } },
          }),
          inputs: { RAW: 'input.raw' },
        },
        classify: {
          step: tritonStep({
            transport: client.transport,
            model: 'classify',
            inputs: { FEATURES: { datatype: 'FP32', shape: [-1] } },
            outputs: { SCORES: { datatype: 'FP32', shape: [-1] }, LABEL: { datatype: 'INT32', shape: [1] } },
          }),
          inputs: { FEATURES: 'preprocess.FEATURES' },
        },
        explain: {
          step: llmStep({
            model: createOpenAIChatModel({ apiKey: 'test-key', baseURL: llm.url }),
            modelName: 'gpt-4o-mini',
            inputs: { label: { kind: 'json' } },
            prompt: ({ label }) =>
              `explain label ${Array.from((label as Tensor).data as Int32Array).join(',')}`,
          }),
          inputs: { label: 'classify.LABEL' },
        },
      },
      outputs: { scores: 'classify.SCORES', explanation: 'explain.text' },
    });

  it('runs the DAG and returns the mapped outputs', async () => {
    llm.reset();
    const result = await build().run({
      raw: { datatype: 'FP32', shape: [3], data: Float32Array.from([2, 8, 4]) },
    });
    expect(Array.from((result.outputs.scores as Tensor).data as Float32Array)).toEqual([2, 5, 3]);
    expect(result.outputs.explanation).toBe('the highest score wins');
    expect(llm.requests[0]?.body).toMatchObject({ messages: [{ role: 'user', content: 'explain label 1' }] });
  });

  it('one deadline covers the run: a hanging LLM step ends it with DEADLINE_EXCEEDED, its call aborted', async () => {
    llm.reset();
    llm.setFault({ kind: 'slow-first-byte', delayMs: 120_000 });
    try {
      const error = (await build()
        .run({ raw: { datatype: 'FP32', shape: [1], data: Float32Array.from([1]) } }, { timeoutMs: 10_000 })
        .catch((caught: unknown) => caught)) as InfergateError;
      expect(error.code).toBe('DEADLINE_EXCEEDED');
      expect(error.details?.steps).toMatchObject({
        preprocess: { status: 'ok' },
        classify: { status: 'ok' },
        explain: { status: 'cancelled' },
      });
      await expect.poll(() => llm.disconnects, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    } finally {
      llm.setFault(undefined);
    }
  });
});

import type { InferTransport } from '@infergate/core';
import {
  type ChatModelLike,
  createPipeline,
  functionStep,
  llmStep,
  type Pipeline,
  type Tensor,
  tritonStep,
} from '@infergate/pipeline';

const FEATURES = 16;

/**
 * preprocess (Triton `identity` on BYTES, standing in for a tokenizer) → features (parse) →
 * classify (Triton `add_sub`: features + bias) → label (argmax per record) → explain (an LLM, with a
 * fallback so a provider outage still returns labels). One deadline covers the whole run.
 */
export function createClassifyPipeline(options: {
  triton: InferTransport;
  chat: ChatModelLike;
  chatModel: string;
}): Pipeline {
  return createPipeline({
    name: 'classify-and-explain',
    inputs: { records: { kind: 'tensor', datatype: 'BYTES', shape: [-1] } },
    timeoutMs: 30_000,
    steps: {
      preprocess: {
        step: tritonStep({
          transport: options.triton,
          model: 'identity',
          inputs: { INPUT0: { datatype: 'BYTES', shape: [-1] } },
          outputs: { OUTPUT0: { datatype: 'BYTES', shape: [-1] } },
        }),
        inputs: { INPUT0: 'input.records' },
      },
      features: {
        step: functionStep({
          inputs: { text: { kind: 'tensor', datatype: 'BYTES', shape: [-1] } },
          outputs: { features: { kind: 'tensor', datatype: 'FP32', shape: [-1, FEATURES] } },
          run: async ({ text }) => {
            const decoder = new TextDecoder();
            const rows = ((text as Tensor).data as readonly (string | Uint8Array)[]).map((element) =>
              (typeof element === 'string' ? element : decoder.decode(element)).split(',').map(Number),
            );
            const data = Float32Array.from(
              rows.flatMap((row) => Array.from({ length: FEATURES }, (_, i) => row[i] ?? 0)),
            );
            return { outputs: { features: { datatype: 'FP32', shape: [rows.length, FEATURES], data } } };
          },
        }),
        inputs: { text: 'preprocess.OUTPUT0' },
      },
      classify: {
        step: tritonStep({
          transport: options.triton,
          model: 'add_sub',
          inputs: {
            INPUT0: { datatype: 'FP32', shape: [-1, FEATURES] },
            INPUT1: { datatype: 'FP32', shape: [-1, FEATURES] },
          },
          outputs: { OUTPUT0: { datatype: 'FP32', shape: [-1, FEATURES] } },
        }),
        inputs: {
          INPUT0: 'features.features',
          // The bias: same shape as the features, every value 0.5.
          INPUT1: {
            from: 'features.features',
            map: (value) => {
              const features = value as Tensor;
              return {
                ...features,
                data: new Float32Array((features.data as Float32Array).length).fill(0.5),
              };
            },
            type: { kind: 'tensor', datatype: 'FP32', shape: [-1, FEATURES] },
          },
        },
      },
      label: {
        step: functionStep({
          inputs: { scores: { kind: 'tensor', datatype: 'FP32', shape: [-1, FEATURES] } },
          outputs: { labels: { kind: 'json' }, summary: { kind: 'text' } },
          run: async ({ scores }) => {
            const data = (scores as Tensor).data as Float32Array;
            const labels = Array.from({ length: data.length / FEATURES }, (_, row) => {
              const values = Array.from(data.subarray(row * FEATURES, (row + 1) * FEATURES));
              return `class-${values.indexOf(Math.max(...values))}`;
            });
            return { outputs: { labels, summary: labels.join(' ') } };
          },
        }),
        inputs: { scores: 'classify.OUTPUT0' },
      },
      explain: {
        step: llmStep({
          model: options.chat,
          modelName: options.chatModel,
          inputs: { summary: { kind: 'text' } },
          prompt: ({ summary }) => `In one sentence, explain these labels: ${String(summary)}`,
          maxTokens: 64,
        }),
        inputs: { summary: 'label.summary' },
        fallback: (error) => ({ text: `(no explanation: ${error.message})`, usage: {} }),
      },
    },
    outputs: { labels: 'label.labels', explanation: 'explain.text' },
  });
}

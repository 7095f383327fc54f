// What the docs' code blocks assume without declaring it (a logger, a request built elsewhere), per
// document, for test/unit/doc-snippets.test.ts. Declarations and type imports only: nothing here runs.
// A new block that leans on such a name fails the test until the name is declared here (or in the
// block itself).

const shapes = `import type { CallOptions, DataType, InferRequest, InferResponse, InferTransport, Parameters } from '@infergate/core';`;

export const PRELUDES: Record<string, string> = {
  'docs/architecture.md': shapes,
  'docs/concepts/transport.md': shapes,
  'docs/concepts/interceptors.md': shapes,
  'docs/concepts/cost.md': `
import type { ChatModel, ChatRequest } from '@infergate/llm';
declare const chat: ChatModel;
declare const request: ChatRequest;`,
  'docs/concepts/routing.md': `
import type { InferRequest } from '@infergate/core';
import type { ChatModel } from '@infergate/llm';
declare const chat: ChatModel;
declare const request: InferRequest;`,
  'docs/recipes/multi-tenant-gpus.md': `
import type { InputTensor, TritonClient } from '@infergate/core';
declare const triton: TritonClient;
declare const inputs: InputTensor[];`,
  'docs/recipes/serverless.md': `
import type { TritonClient } from '@infergate/core';
import type { InferRouter } from '@infergate/router';
declare function buildGateway(routerState?: object): { router: InferRouter; triton: TritonClient };
declare const tracerProvider: { forceFlush(): Promise<void> };
declare const store: { get(key: string): Promise<string | undefined>; set(key: string, value: string): Promise<void> };`,
  'packages/batcher/README.md': `declare const data: Float32Array;`,
  'packages/cost/README.md': `
import type { ChatModel, ChatUsage } from '@infergate/llm';
declare const log: { warn(value: unknown): void };
declare function alert(value: unknown): void;
declare const openAiModel: ChatModel;
declare const url: string;
declare const tenant: string;
declare const key: string;
declare const model: string;
declare const provider: string;
declare const estimateUsd: number;
declare function call(): Promise<{ usage: ChatUsage }>;`,
  'packages/llm/README.md': `
import type { ChatMessage } from '@infergate/llm';
declare const messages: ChatMessage[];`,
  'packages/router/README.md': `
import type { ChatModel } from '@infergate/llm';
declare function log(...values: unknown[]): void;
declare const tritonLlm: ChatModel;
declare const openai: ChatModel;
declare const anthropic: ChatModel;`,
};

/**
 * Documents whose blocks, as one program, run against the reference server (TRITON_URL points at
 * it), with what their console.log output must contain: a string anywhere, a RegExp (with `m`, a
 * whole line). Pick one for each block that prints, so a block that stops printing fails.
 */
export const RUNNABLE: Record<string, (string | RegExp)[]> = {
  'README.md': ['Float32Array(16) [\n  2, 2,'],
  'docs/getting-started.md': ['127.0.0.1:', 'NOT_FOUND false', 'CANCELLED'],
  'packages/testing/README.md': [],
  'packages/model-config/README.md': [
    'max_batch_size: 8', // printModelConfig
    /^8$/m, // modelConfigToJson(config).max_batch_size
    /^64$/m, // the builder's maxBatchSize
    'models/m/config.pbtxt: error unbounded-queue', // lint
    "{ tenant: 'interactive', priority: 1, timeoutMs: 50 }", // the preset's client side
    /^\[\]$/m, // checkMultiTenantPreset finds nothing
    /^\s{2}'dynamic_batching',$/m, // the override's keys
  ],
  'packages/pipeline/README.md': ['hello ADA ok', "[ 'score' ]"],
};

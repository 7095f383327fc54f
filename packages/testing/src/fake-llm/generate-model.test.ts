import { createTritonClient, InfergateError, type InferResult, type TritonClient } from '@infergate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateModel } from '../models/generate.js';
import { startTestServer, type TestServer } from '../test-server.js';

let server: TestServer;
let client: TritonClient;

beforeAll(async () => {
  server = await startTestServer({ models: [generateModel({ name: 'generate_b', maxBatchSize: 4 })] });
  client = createTritonClient({ url: server.url });
});
afterAll(async () => {
  await client.close();
  await server.stop();
});

const text = (prompt: string) => ({
  name: 'text_input',
  datatype: 'BYTES' as const,
  shape: [1],
  data: [prompt],
});
const flag = (name: string, value = true) => ({ name, datatype: 'BOOL' as const, shape: [1], data: [value] });

async function all(results: AsyncIterable<InferResult>): Promise<InferResult[]> {
  const out: InferResult[] = [];
  for await (const result of results) out.push(result);
  return out;
}

describe('generate (built-in decoupled model)', () => {
  it('is a built-in and streams one word per response', async () => {
    expect(server.models()).toContain('generate');
    const results = await all(
      client.inferStream(
        'generate',
        [
          text('alpha beta gamma'),
          flag('stream'),
          flag('return_num_output_tokens'),
          flag('return_finish_reason'),
        ],
        { outputs: ['text_output', 'num_output_tokens', 'finish_reason'] },
      ),
    );
    expect(results.map((result) => result.output('text_output').strings()[0])).toEqual([
      'alpha',
      ' beta',
      ' gamma',
    ]);
    expect(results.map((result) => result.output('num_output_tokens').toArray()[0])).toEqual([1, 1, 1]);
    expect(results.map((result) => result.output('finish_reason').strings()[0])).toEqual([
      'None',
      'None',
      'stop',
    ]);
  });

  it('prepends the prompt without exclude_input_in_output, as vLLM does, and honours max_tokens', async () => {
    const textOnly = { outputs: ['text_output'] };
    const [whole] = await all(client.inferStream('generate', [text('a b c')], textOnly));
    expect(whole?.output('text_output').strings()).toEqual(['a b ca b c']);
    const [cut] = await all(
      client.inferStream(
        'generate',
        [
          text('a b c'),
          flag('exclude_input_in_output'),
          { name: 'max_tokens', datatype: 'INT32', shape: [1], data: [2] },
        ],
        textOnly,
      ),
    );
    expect(cut?.output('text_output').strings()).toEqual(['a b']);
  });

  it('refuses streaming with the prompt included, as vLLM does', async () => {
    const error = await all(
      client.inferStream('generate', [text('a'), flag('stream'), flag('exclude_input_in_output', false)]),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InfergateError);
    expect((error as InfergateError).message).toContain('`exclude_input_in_output` = False is not allowed');
  });

  it('takes a batch dimension when built with maxBatchSize', async () => {
    const results = await all(
      client.inferStream(
        'generate_b',
        [
          { name: 'text_input', datatype: 'BYTES', shape: [1, 1], data: ['x y'] },
          { name: 'stream', datatype: 'BOOL', shape: [1, 1], data: [true] },
        ],
        { outputs: ['text_output'] },
      ),
    );
    expect(results.map((result) => result.output('text_output').shape)).toEqual([
      [1, 1],
      [1, 1],
    ]);
  });
});

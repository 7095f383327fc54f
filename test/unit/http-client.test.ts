import { createHttpClient, ErrorCode, type HttpClient, InfergateError } from '@infergate/core/http';
import { startTestServer, type TestServer } from '@infergate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: TestServer;
let client: HttpClient;

beforeAll(async () => {
  server = await startTestServer({ http: true });
  client = createHttpClient({ url: server.httpUrl });
});

afterAll(async () => {
  await client?.close();
  await server?.stop();
});

describe('HTTP client against the reference server', () => {
  it('answers health and metadata', async () => {
    expect(await client.serverLive()).toBe(true);
    expect(await client.serverReady()).toBe(true);
    expect(await client.modelReady('add_sub')).toBe(true);
    expect(await client.modelReady('no_such_model')).toBe(false);
    const metadata = await client.serverMetadata();
    expect(metadata.name).toBe('infergate-testing');
    expect(metadata.extensions).toContain('binary_tensor_data');
    const model = await client.modelMetadata('add_sub');
    expect(model.inputs.map((input) => input.name)).toEqual(['INPUT0', 'INPUT1']);
  });

  it('infers with binary tensors', async () => {
    const result = await client.infer('add_sub', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(2) },
      { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(0.5) },
    ]);
    expect(Array.from(result.output('OUTPUT0').data as Float32Array)).toEqual(new Array(16).fill(2.5));
    expect(Array.from(result.output('OUTPUT1').data as Float32Array)).toEqual(new Array(16).fill(1.5));
  });

  it('maps an unknown model to NOT_FOUND', async () => {
    const failure = await client
      .infer('no_such_model', [{ name: 'x', datatype: 'FP32', data: [1] }])
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InfergateError);
    expect((failure as InfergateError).code).toBe(ErrorCode.NotFound);
  });

  it('streams generate_stream events', async () => {
    const texts: string[] = [];
    for await (const event of client.generateStream('generate', {
      text_input: 'one two three',
      stream: true,
    })) {
      texts.push(String(event.text_output));
    }
    expect(texts.join('')).toBe('one two three');
  });
});

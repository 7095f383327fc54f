// The small program every runtime runs: inference on several datatypes and a streamed generation,
// each result checked. It sees the client through this interface only, so the same checks run over
// gRPC (`@infergate/core`) and HTTP (`@infergate/core/http`), in Node, Bun, Deno and workerd.
import type { InferResult, InputTensor } from '@infergate/core/http';

export interface CheckedClient {
  infer(model: string, inputs: readonly InputTensor[]): Promise<InferResult>;
  /** The text pieces of a streamed generation of `prompt` on the decoupled `generate` model. */
  generateStream(prompt: string): AsyncIterable<string>;
}

export interface CheckReport {
  ok: boolean;
  checks: { name: string; ok: boolean; detail?: string }[];
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
const same = (a: unknown, b: unknown) =>
  JSON.stringify(a, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value)) ===
  JSON.stringify(b, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value));

/**
 * The reference server's `identity` takes every datatype; a real Triton (test/interop) has one
 * `identity_<datatype>` model each: pass `triton: true` there.
 */
export async function runChecks(
  client: CheckedClient,
  options: { triton?: boolean } = {},
): Promise<CheckReport> {
  const identityModel = (datatype: string) =>
    options.triton ? `identity_${datatype.toLowerCase()}` : 'identity';
  const checks: CheckReport['checks'] = [];
  const check = async (name: string, body: () => Promise<unknown>, expected: unknown) => {
    try {
      const actual = await body();
      checks.push(
        same(actual, expected) ? { name, ok: true } : { name, ok: false, detail: `got ${String(actual)}` },
      );
    } catch (error) {
      checks.push({ name, ok: false, detail: error instanceof Error ? error.message : String(error) });
    }
  };
  const identity = async (datatype: InputTensor['datatype'], data: unknown[]) =>
    (await client.infer(identityModel(datatype), [{ name: 'INPUT0', datatype, data } as InputTensor])).output(
      'OUTPUT0',
    );

  await check('FP32 add_sub', async () => {
    const result = await client.infer('add_sub', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(2) },
      { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16).fill(0.5) },
    ]);
    return [result.output('OUTPUT0').toArray()[15], result.output('OUTPUT1').toArray()[0]];
  }, [2.5, 1.5]);
  await check(
    'INT64 extremes',
    async () => (await identity('INT64', [-(2n ** 63n), 2n ** 63n - 1n])).toArray(),
    [-(2n ** 63n), 2n ** 63n - 1n],
  );
  await check('FP16', async () => (await identity('FP16', [1.5, -2, 65504])).toArray(), [1.5, -2, 65504]);
  await check('BOOL', async () => (await identity('BOOL', [true, false, true])).toArray(), [
    true,
    false,
    true,
  ]);
  await check('BYTES text and binary', async () => {
    const output = await identity('BYTES', ['', 'héllo ✓', new Uint8Array([0, 255, 10])]);
    return [...output.strings().slice(0, 2), hex((output.data as Uint8Array[])[2] as Uint8Array)];
  }, ['', 'héllo ✓', '00ff0a']);
  await check('generate stream', async () => {
    const pieces: string[] = [];
    for await (const piece of client.generateStream('one two three')) pieces.push(piece);
    return pieces;
  }, ['one', ' two', ' three']);
  return { ok: checks.every((item) => item.ok), checks };
}

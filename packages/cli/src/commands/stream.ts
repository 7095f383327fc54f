import { createCallScope } from '@infergate/core';
import type { CliIo } from '../cli-io.js';
import { clientFor, requireGrpc, runCommand, toJson } from '../internal/command-line.js';
import { inferRequestOf, inferUsage, parseInferCommandLine } from '../internal/infer-options.js';
import { filesField, resultJson, resultText, writeOutputs } from '../internal/result-output.js';

export const summary = 'Stream the responses of a decoupled model';

export const usage = inferUsage(`Usage: infergate stream MODEL --input NAME:DTYPE:SHAPE:VALUES... [options]

Sends one request over Triton's streaming RPC and prints each response
as it arrives, until the server marks the last one. With --json, each
response is one JSON line. Ctrl-C cancels the stream. gRPC only: KServe
v2 HTTP answers each request once, so --protocol http exits 2.

Example (a vLLM-style generate model):
  infergate stream generate --input text_input:BYTES:1:hello \\
    --input stream:BOOL:1:true --output text_output`);

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runCommand(io, usage, argv, async () => {
    const { values, model } = parseInferCommandLine(argv);
    requireGrpc(
      values,
      'infergate stream',
      'KServe v2 HTTP answers each inference request once, so a decoupled ' +
        "model's responses cannot stream over it; use --protocol grpc",
    );
    const { inputs, options } = await inferRequestOf(values, io.signal);
    const { client, timeoutMs } = clientFor(values);
    // The client's timeout bounds each call; a stream gets the same bound for its whole life. A call
    // scope, not AbortSignal.timeout: that fires after 1 ms past 2^31 − 1 ms and throws past 2^32 − 1.
    const scope = createCallScope({ signal: io.signal, timeoutMs, what: 'the stream', own: true });
    try {
      let index = 0;
      const signal = scope.signal as AbortSignal;
      for await (const result of client.inferStream(model, inputs, { ...options, signal })) {
        const written = await writeOutputs(result, values['output-dir'], `.${index}`);
        if (values.json)
          io.stdout(`${toJson({ index, ...resultJson(result), ...filesField(written) }, 0)}\n`);
        else io.stdout(`#${index} ${resultText(result).split('\n').join(`\n#${index} `)}\n`);
        index++;
      }
      if (!values.json) io.stdout(`${index} response${index === 1 ? '' : 's'}\n`);
      return 0;
    } finally {
      scope.dispose();
      await client.close();
    }
  });
}

import type { CliIo } from '../cli-io.js';
import { runCommand, toJson, withClient } from '../internal/command-line.js';
import { inferRequestOf, inferUsage, parseInferCommandLine } from '../internal/infer-options.js';
import { filesField, resultJson, resultText, writeOutputs } from '../internal/result-output.js';

export const summary = 'Run one inference and print the outputs';

export const usage = inferUsage(`Usage: infergate infer MODEL --input NAME:DTYPE:SHAPE:VALUES... [options]

Sends one inference request and prints each output: its name, datatype,
shape and values (the first 32 in text mode, all of them with --json).

Example (add_sub of 'infergate serve-test' takes [-1,16] FP32 tensors;
ones.json holds [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]):
  infergate infer add_sub --input INPUT0:FP32:1x16:@ones.json \\
    --input INPUT1:FP32:1x16:@ones.json --output-dir out`);

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runCommand(io, usage, argv, async () => {
    const { values, model } = parseInferCommandLine(argv);
    const { inputs, options } = await inferRequestOf(values, io.signal);
    return withClient(values, async (client) => {
      const result = await client.infer(model, inputs, options);
      const written = await writeOutputs(result, values['output-dir']);
      if (values.json) io.stdout(`${toJson({ ...resultJson(result), ...filesField(written) })}\n`);
      else {
        io.stdout(`${resultText(result)}\n`);
        for (const path of written) io.stdout(`wrote ${path}\n`);
      }
      return 0;
    });
  });
}

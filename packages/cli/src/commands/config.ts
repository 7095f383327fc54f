import { toJson as protobufToJson } from '@bufbuild/protobuf';
import { ModelConfigSchema } from '@infergate/core/proto';
import { printModelConfig } from '@infergate/model-config';
import type { CliIo } from '../cli-io.js';
import {
  CONNECTION_HELP,
  CONNECTION_OPTIONS,
  parseCommandLine,
  positionals,
  runCommand,
  toJson,
  usageError,
  withClient,
} from '../internal/command-line.js';

export const summary = 'A model’s full configuration, as JSON or config.pbtxt';

export const usage = `Usage: infergate config MODEL [options]

Prints the model's configuration (Triton's ModelConfig) as JSON, with
the field names of Triton's config.pbtxt (max_batch_size, input, …),
or as config.pbtxt text with --format pbtxt.

Options:
  --model-version V       A version other than the latest.
  --format json|pbtxt     The output format (default json).

${CONNECTION_HELP}`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runCommand(io, usage, argv, async () => {
    const { values, positionals: rest } = parseCommandLine(argv, {
      ...CONNECTION_OPTIONS,
      'model-version': { type: 'string' },
      format: { type: 'string' },
    });
    const [model = ''] = positionals(rest, ['MODEL']);
    const format = values.format ?? 'json';
    if (format !== 'json' && format !== 'pbtxt')
      throw usageError(`--format must be json or pbtxt, got '${format}'`);
    return withClient(values, async (client) => {
      const config = await client.modelConfig(model, {
        ...(values['model-version'] !== undefined ? { version: values['model-version'] } : {}),
        ...(io.signal ? { signal: io.signal } : {}),
      });
      if (format === 'pbtxt') {
        io.stdout(printModelConfig(config));
        return 0;
      }
      // Triton's own JSON form of the config uses the .proto field names.
      io.stdout(`${toJson(protobufToJson(ModelConfigSchema, config, { useProtoFieldName: true }))}\n`);
      return 0;
    });
  });
}

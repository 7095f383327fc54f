import type { CliIo } from '../cli-io.js';
import {
  CONNECTION_HELP,
  CONNECTION_OPTIONS,
  parseCommandLine,
  positionals,
  runCommand,
  toJson,
  withClient,
} from '../internal/command-line.js';
import { textTable } from '../internal/text-table.js';

export const summary = 'A model’s inputs, outputs, versions and platform';

export const usage = `Usage: infergate metadata MODEL [options]

Prints the model's metadata: platform, versions, and each input and
output with its datatype and shape (-1 is a variable dimension).

Options:
  --model-version V       A version other than the latest.

${CONNECTION_HELP}`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runCommand(io, usage, argv, async () => {
    const { values, positionals: rest } = parseCommandLine(argv, {
      ...CONNECTION_OPTIONS,
      'model-version': { type: 'string' },
    });
    const [model = ''] = positionals(rest, ['MODEL']);
    return withClient(values, async (client) => {
      const metadata = await client.modelMetadata(model, {
        ...(values['model-version'] !== undefined ? { version: values['model-version'] } : {}),
        ...(io.signal ? { signal: io.signal } : {}),
      });
      if (values.json) {
        io.stdout(`${toJson(metadata)}\n`);
        return 0;
      }
      const rows = [
        ...metadata.inputs.map((tensor) => [
          'input',
          tensor.name,
          tensor.datatype,
          `[${tensor.shape.join(',')}]`,
        ]),
        ...metadata.outputs.map((tensor) => [
          'output',
          tensor.name,
          tensor.datatype,
          `[${tensor.shape.join(',')}]`,
        ]),
      ];
      io.stdout(
        `model ${metadata.name} (${metadata.platform || 'unknown platform'}), versions ${metadata.versions.join(', ') || '-'}\n` +
          `${textTable([['KIND', 'NAME', 'DATATYPE', 'SHAPE'], ...rows])}\n`,
      );
      return 0;
    });
  });
}

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

export const summary = 'Unload a model from the server';

export const usage = `Usage: infergate unload MODEL [--dependents] [options]

Asks the server to unload MODEL (the server must run with explicit model
control).

Options:
  --dependents            Also unload the models that depend on it.

${CONNECTION_HELP}`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runCommand(io, usage, argv, async () => {
    const { values, positionals: rest } = parseCommandLine(argv, {
      ...CONNECTION_OPTIONS,
      dependents: { type: 'boolean' },
    });
    const [model = ''] = positionals(rest, ['MODEL']);
    return withClient(values, async (client) => {
      await client.unloadModel(model, {
        unloadDependents: values.dependents === true,
        ...(io.signal ? { signal: io.signal } : {}),
      });
      io.stdout(values.json ? `${toJson({ model, loaded: false }, 0)}\n` : `unloaded ${model}\n`);
      return 0;
    });
  });
}

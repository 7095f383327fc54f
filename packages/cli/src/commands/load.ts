import { readFile } from 'node:fs/promises';
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

export const summary = 'Load (or reload) a model in the repository';

export const usage = `Usage: infergate load MODEL [--config JSON|@FILE] [options]

Asks the server to load MODEL from its repository (the server must run
with explicit model control). With --config, the given configuration
(Triton's JSON form) is used instead of the repository's.

Options:
  --config JSON|@FILE     A model configuration, inline or from a file.

${CONNECTION_HELP}`;

async function configText(value: string): Promise<string> {
  const text = value.startsWith('@')
    ? await readFile(value.slice(1), 'utf8').catch((error: NodeJS.ErrnoException) => {
        throw usageError(`--config: cannot read ${value.slice(1)} (${error.code ?? 'error'})`);
      })
    : value;
  try {
    JSON.parse(text);
  } catch (error) {
    throw usageError(`--config is not JSON: ${(error as Error).message}`);
  }
  return text;
}

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runCommand(io, usage, argv, async () => {
    const { values, positionals: rest } = parseCommandLine(argv, {
      ...CONNECTION_OPTIONS,
      config: { type: 'string' },
    });
    const [model = ''] = positionals(rest, ['MODEL']);
    const config = values.config === undefined ? undefined : await configText(values.config);
    return withClient(values, async (client) => {
      await client.loadModel(model, {
        ...(config !== undefined ? { config } : {}),
        ...(io.signal ? { signal: io.signal } : {}),
      });
      io.stdout(values.json ? `${toJson({ model, loaded: true }, 0)}\n` : `loaded ${model}\n`);
      return 0;
    });
  });
}

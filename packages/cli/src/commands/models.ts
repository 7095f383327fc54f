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

export const summary = 'List the model repository with each model’s state';

export const usage = `Usage: infergate models [options]

Lists the model repository index: every model with its version, state
(READY, UNAVAILABLE, LOADING, …) and the reason the server gives.

Options:
  --ready                 Only models that are ready.

${CONNECTION_HELP}`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runCommand(io, usage, argv, async () => {
    const { values, positionals: rest } = parseCommandLine(argv, {
      ...CONNECTION_OPTIONS,
      ready: { type: 'boolean' },
    });
    positionals(rest, []);
    return withClient(values, async (client) => {
      const models = await client.repositoryIndex({
        readyOnly: values.ready === true,
        ...(io.signal ? { signal: io.signal } : {}),
      });
      if (values.json) io.stdout(`${toJson(models)}\n`);
      else if (models.length === 0) io.stdout('no models\n');
      else {
        const rows = models.map((model) => [model.name, model.version || '-', model.state, model.reason]);
        io.stdout(`${textTable([['MODEL', 'VERSION', 'STATE', 'REASON'], ...rows])}\n`);
      }
      return 0;
    });
  });
}

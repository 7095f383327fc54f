import { type CliIo, ExitCode } from '../cli-io.js';
import {
  CONNECTION_HELP,
  CONNECTION_OPTIONS,
  parseCommandLine,
  runCommand,
  toJson,
  withClient,
} from '../internal/command-line.js';

export const summary = 'Is the server live and ready (and these models)?';

export const usage = `Usage: infergate health [MODEL...] [options]

Asks the server whether it is live and ready, and each MODEL whether it
is ready. Exits 0 when all are, 3 when one is not, 1 when the server
cannot be asked.

${CONNECTION_HELP}`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runCommand(io, usage, argv, async () => {
    const { values, positionals: models } = parseCommandLine(argv, CONNECTION_OPTIONS);
    return withClient(values, async (client) => {
      const options = io.signal ? { signal: io.signal } : {};
      const live = await client.serverLive(options);
      const ready = await client.serverReady(options);
      const metadata = await client.serverMetadata(options);
      const modelReady: Record<string, boolean> = {};
      for (const model of models) modelReady[model] = await client.modelReady(model, options);
      const healthy = live && ready && Object.values(modelReady).every(Boolean);
      if (values.json) {
        io.stdout(
          `${toJson({ healthy, live, ready, server: { name: metadata.name, version: metadata.version }, models: modelReady })}\n`,
        );
      } else {
        const lines = [
          `server ${metadata.name} ${metadata.version} at ${client.address}`,
          `live   ${live ? 'yes' : 'no'}`,
          `ready  ${ready ? 'yes' : 'no'}`,
          ...models.map((model) => `model ${model}: ${modelReady[model] ? 'ready' : 'not ready'}`),
        ];
        io.stdout(`${lines.join('\n')}\n`);
      }
      return healthy ? ExitCode.Ok : ExitCode.Unhealthy;
    });
  });
}

import type { Duration, ModelStatistics } from '@infergate/core';
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

export const summary = 'Inference statistics of one model or of all';

export const usage = `Usage: infergate stats [MODEL] [options]

Prints the server's inference statistics: requests that succeeded and
failed, executions, and the mean queue and compute times per request.
--json prints everything the server reports (batches, responses, …).

Options:
  --model-version V       A version other than the latest.

${CONNECTION_HELP}`;

function mean(duration: Duration): string {
  return duration.count === 0 ? '-' : (duration.ms / duration.count).toFixed(3);
}

function row(stats: ModelStatistics): string[] {
  const { inference } = stats;
  return [
    stats.name,
    stats.version || '-',
    String(inference.success.count),
    String(inference.fail.count),
    String(stats.inferenceCount),
    String(stats.executionCount),
    mean(inference.queue),
    mean(inference.computeInfer),
  ];
}

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runCommand(io, usage, argv, async () => {
    const { values, positionals: rest } = parseCommandLine(argv, {
      ...CONNECTION_OPTIONS,
      'model-version': { type: 'string' },
    });
    const [model = ''] = positionals(rest, ['MODEL'], 1);
    return withClient(values, async (client) => {
      const stats = await client.modelStatistics(model, {
        ...(values['model-version'] !== undefined ? { version: values['model-version'] } : {}),
        ...(io.signal ? { signal: io.signal } : {}),
      });
      if (values.json) {
        io.stdout(`${toJson(stats)}\n`);
        return 0;
      }
      const header = [
        'MODEL',
        'VERSION',
        'SUCCESS',
        'FAIL',
        'INFERENCES',
        'EXECUTIONS',
        'QUEUE_MS',
        'INFER_MS',
      ];
      io.stdout(`${textTable([header, ...stats.map(row)])}\n`);
      return 0;
    });
  });
}

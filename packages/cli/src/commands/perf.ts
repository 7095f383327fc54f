import { writeFile } from 'node:fs/promises';
import { createMicroBatcher, type MicroBatcher } from '@infergate/batcher';
import { InfergateError, type InferOptions, type InputTensor } from '@infergate/core';
import type { CliIo } from '../cli-io.js';
import {
  CONNECTION_HELP,
  CONNECTION_OPTIONS,
  clientFor,
  integerOption,
  parseCommandLine,
  positionals,
  protocolOf,
  runCommand,
  serverClientFor,
  toJson,
  usageError,
} from '../internal/command-line.js';
import { INPUT_HELP, parseInputSpec } from '../internal/input-spec.js';
import type { ServerClient } from '../internal/server-client.js';
import { textTable } from '../internal/text-table.js';
import { batcherOptionsOf } from '../perf/batcher-options.js';
import { parseLoadRange } from '../perf/load-range.js';
import { closedLoopWindow, type PerfCall, type RateDistribution, rateWindow } from '../perf/load-window.js';
import { type PerfReport, type PerfStep, perfCsv, perfSvg } from '../perf/perf-report.js';
import { parseShapeOverride, randomInputs } from '../perf/random-inputs.js';
import {
  measureUntilStable,
  type ServerCounters,
  type StabilityOptions,
} from '../perf/stable-measurement.js';

export const summary = 'Measure throughput and latency of a model under load';

export const usage = `Usage: infergate perf MODEL [options]

Sends inference requests to MODEL at each load step and reports
throughput, latency percentiles (p50/p90/p95/p99), client CPU per call
and the server's own queue and compute times (statistics RPC). Each step
measures windows until --stable-windows consecutive windows agree within
--tolerance on throughput and mean latency (at most --max-windows).
Over --protocol http, --client-batching and --shared-memory (gRPC
client features) exit 2.

Example:
  infergate perf identity --concurrency 1:64:x2 --csv perf.csv --svg perf.svg

Load (one of):
  --concurrency RANGE     Closed loop: RANGE concurrent callers, each
                          sending again when its answer is in. RANGE is
                          START[:END[:STEP]], STEP added or xF multiplied
                          (1:64:x2 → 1,2,4,…,64). Default: 1.
  --request-rate RANGE    Open loop at RANGE requests/s; latency counts
                          from each request's scheduled send time.
  --distribution D        constant or poisson (rate mode). Default: constant.
  --max-outstanding N     Rate mode: most requests waiting at once; sends
                          beyond it are skipped and counted. Default: 1000.

Inputs (random data from the model's metadata unless --input is given):
  --shape NAME:DIMS       Shape of an input with variable dimensions.
  --batch-size N          First dimension of variable-batch inputs. Default: 1.
${INPUT_HELP.split('\n')
  .map((line) => `  ${line}`)
  .join('\n')}

Client:
  --client-batching       Send through @infergate/batcher (micro-batching);
                          each step reports the batches it sent.
  --batch-policy P        adaptive or fixed. Default: adaptive.
  --max-batch-size N      Most rows per client batch. Default: 64.
  --max-queue-delay-ms MS Longest wait for a batch to fill. Default: 10.
  --max-in-flight N       Batches in flight at once. Default: 2.
  --shared-memory         Let the client pass large tensors through shared
                          memory (enableGpuIpc) when the server is local.
  --model-version V       A version other than the latest.

Measurement:
  --window-ms MS          Length of one window. Default: 1000.
  --stable-windows N      Windows that must agree. Default: 3.
  --tolerance PERCENT     How far they may differ. Default: 10.
  --max-windows N         Most windows per step. Default: 10.
  --no-server-stats       Do not read the statistics RPC.

Output:
  --csv FILE              One row per step.
  --json-file FILE        The whole report as JSON (--json prints it).
  --svg FILE              Latency (p50/p90/p99) against throughput.

${CONNECTION_HELP}`;

const PERF_OPTIONS = {
  concurrency: { type: 'string' },
  'request-rate': { type: 'string' },
  distribution: { type: 'string' },
  'max-outstanding': { type: 'string' },
  input: { type: 'string', short: 'i', multiple: true },
  shape: { type: 'string', multiple: true },
  'batch-size': { type: 'string' },
  'client-batching': { type: 'boolean' },
  'batch-policy': { type: 'string' },
  'max-batch-size': { type: 'string' },
  'max-queue-delay-ms': { type: 'string' },
  'max-in-flight': { type: 'string' },
  'shared-memory': { type: 'boolean' },
  'model-version': { type: 'string' },
  'window-ms': { type: 'string' },
  'stable-windows': { type: 'string' },
  tolerance: { type: 'string' },
  'max-windows': { type: 'string' },
  'no-server-stats': { type: 'boolean' },
  csv: { type: 'string' },
  'json-file': { type: 'string' },
  svg: { type: 'string' },
} as const;

function toleranceOf(text: string | undefined): number {
  if (text === undefined) return 0.1;
  const value = Number(text);
  if (!(value > 0 && value < 100))
    throw usageError(`--tolerance must be a percentage above 0 and below 100, got '${text}'`);
  return value / 100;
}

/** What perf calls: the gRPC client, or the HTTP one behind the CLI's `ServerClient`. */
type PerfClient = Pick<ServerClient, 'infer' | 'modelMetadata' | 'modelStatistics' | 'close'>;

async function countersOf(
  client: PerfClient,
  model: string,
  version: string | undefined,
): Promise<ServerCounters> {
  const [stats] = await client.modelStatistics(model, version !== undefined ? { version } : {});
  if (stats === undefined) throw usageError(`the server reports no statistics for ${model}`);
  const { inference } = stats;
  return {
    requests: inference.success.count,
    queueNs: inference.queue.ns,
    computeInputNs: inference.computeInput.ns,
    computeInferNs: inference.computeInfer.ns,
    computeOutputNs: inference.computeOutput.ns,
  };
}

function fixed(value: number | undefined, digits = 3): string {
  return value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);
}

function stepRow(step: PerfStep): string[] {
  return [
    step.mode === 'concurrency' ? `c${step.load}` : `${step.load}/s`,
    fixed(step.throughput, 1),
    fixed(step.latency.p50Ms),
    fixed(step.latency.p90Ms),
    fixed(step.latency.p95Ms),
    fixed(step.latency.p99Ms),
    fixed(step.clientCpuMsPerCall),
    fixed(step.server?.queueUs, 1),
    fixed(step.server?.computeInferUs, 1),
    fixed(step.clientBatches?.meanBatchSize, 1),
    String(step.errors),
    step.stable ? 'yes' : `no (${step.windows})`,
  ];
}

const TABLE_HEADER = [
  'LOAD',
  'INFER/S',
  'P50_MS',
  'P90_MS',
  'P95_MS',
  'P99_MS',
  'CPU_MS/CALL',
  'QUEUE_US',
  'COMPUTE_US',
  'BATCH',
  'ERRORS',
  'STABLE',
];

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runCommand(io, usage, argv, async () => {
    const { values, positionals: rest } = parseCommandLine(argv, { ...CONNECTION_OPTIONS, ...PERF_OPTIONS });
    const [model = ''] = positionals(rest, ['MODEL']);
    if (values.concurrency !== undefined && values['request-rate'] !== undefined) {
      throw usageError('give --concurrency or --request-rate, not both');
    }
    const mode = values['request-rate'] !== undefined ? 'rate' : 'concurrency';
    const loads =
      mode === 'rate'
        ? parseLoadRange(values['request-rate'] as string, 'request-rate', false)
        : parseLoadRange(values.concurrency ?? '1', 'concurrency', true);
    if (mode === 'concurrency' && loads.some((load) => load > 4096)) {
      throw usageError('--concurrency is at most 4096');
    }
    const distribution = values.distribution ?? 'constant';
    if (distribution !== 'constant' && distribution !== 'poisson') {
      throw usageError(`--distribution must be constant or poisson, got '${distribution}'`);
    }
    const maxOutstanding = integerOption(values['max-outstanding'], 'max-outstanding', 1000);
    const batchSize = integerOption(values['batch-size'], 'batch-size', 1);
    const windowMs = integerOption(values['window-ms'], 'window-ms', 1000);
    const stability: StabilityOptions = {
      stableWindows: integerOption(values['stable-windows'], 'stable-windows', 3),
      tolerance: toleranceOf(values.tolerance),
      maxWindows: integerOption(values['max-windows'], 'max-windows', 10),
    };
    if (stability.maxWindows < stability.stableWindows) {
      throw usageError('--max-windows must be at least --stable-windows');
    }
    const shapes = new Map((values.shape ?? []).map(parseShapeOverride));
    const fileInputs = await Promise.all((values.input ?? []).map(parseInputSpec));
    const version = values['model-version'];
    const sharedMemory = values['shared-memory'] === true;

    const batcherOptions = batcherOptionsOf(values);
    const http = protocolOf(values) === 'http';
    if (http && (sharedMemory || values['client-batching'] === true)) {
      // The micro-batcher sits on the gRPC transport and shared memory is a gRPC client feature.
      throw usageError('--client-batching and --shared-memory are gRPC only, not --protocol http');
    }
    let direct: PerfClient;
    let client: PerfClient;
    let batcher: ReturnType<typeof createMicroBatcher> | undefined;
    if (http) {
      direct = serverClientFor(values).client;
      client = direct;
    } else {
      const grpc = clientFor(values, { enableGpuIpc: sharedMemory }).client;
      batcher =
        batcherOptions !== undefined
          ? createMicroBatcher(grpc.grpc, { client: grpc, ...batcherOptions })
          : undefined;
      direct = grpc;
      client = batcher ? clientFor(values, { enableGpuIpc: sharedMemory, transport: batcher }).client : grpc;
    }
    try {
      let inputs: InputTensor[] = fileInputs;
      if (inputs.length === 0) {
        const metadata = await direct.modelMetadata(model, version !== undefined ? { version } : {});
        inputs = randomInputs(metadata, true, batchSize, shapes);
      }
      const options: InferOptions = version !== undefined ? { modelVersion: version } : {};
      const call: PerfCall = () => client.infer(model, inputs, options);
      await call(); // one call first: a wrong input or model fails here with the server's message
      let counters: (() => Promise<ServerCounters>) | undefined;
      if (values['no-server-stats'] !== true) {
        counters = () => countersOf(direct, model, version);
        // KServe servers without Triton's statistics extension: measure anyway, without server times.
        await counters().catch((error: unknown) => {
          counters = undefined;
          io.stderr(
            `infergate perf: no server statistics (${InfergateError.from(error).rawMessage}); measuring without them\n`,
          );
        });
      }
      const steps: PerfStep[] = [];
      for (const load of loads) {
        if (io.signal?.aborted) break;
        const window =
          mode === 'rate'
            ? () =>
                rateWindow(call, load, distribution as RateDistribution, windowMs, maxOutstanding, io.signal)
            : () => closedLoopWindow(call, load, windowMs, io.signal);
        const batchCounters = batcher
          ? () => {
              const stats = (batcher as MicroBatcher).stats();
              return { batches: stats.batches, rows: stats.rows };
            }
          : undefined;
        const measured = await measureUntilStable(window, stability, counters, io.signal, batchCounters);
        const step: PerfStep = { mode, load, ...measured };
        steps.push(step);
        // Progress on stderr, so that stdout holds only the table (or the JSON).
        io.stderr(
          `${stepRow(step)[0]}: ${fixed(step.throughput, 1)} infer/s, p99 ${fixed(step.latency.p99Ms)} ms\n`,
        );
      }
      const report: PerfReport = {
        model,
        url: values.url ?? (http ? 'http://127.0.0.1:8000' : '127.0.0.1:8001'),
        batchSize,
        clientBatching: batcher !== undefined,
        ...(batcherOptions !== undefined ? { batcher: batcherOptions } : {}),
        sharedMemory,
        windowMs,
        steps,
      };
      if (values.csv !== undefined) await writeFile(values.csv, perfCsv(report));
      if (values.svg !== undefined) await writeFile(values.svg, perfSvg(report));
      if (values['json-file'] !== undefined) await writeFile(values['json-file'], `${toJson(report)}\n`);
      if (values.json) io.stdout(`${toJson(report)}\n`);
      else io.stdout(`${textTable([TABLE_HEADER, ...steps.map(stepRow)])}\n`);
      const failed = steps.find((step) => step.completed === 0);
      if (failed) {
        io.stderr(
          `infergate: no request completed at load ${failed.load}${failed.firstError ? `: ${failed.firstError}` : ''}\n`,
        );
        return 1;
      }
      return 0;
    } finally {
      await batcher?.close({ drain: false });
      if (client !== direct) await client.close();
      await direct.close();
    }
  });
}

import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { ErrorCode, elementSize, InfergateError } from '@infergate/core';
import { clearLongTimer, type LongTimer, setLongTimeout } from '@infergate/core/internal/long-timer';
import { readInferRequest } from './infer-request.js';
import { buildInferResponse, serializeInferResponse } from './infer-response.js';
import { type ModelInferRequest, ModelInferRequestSchema } from './internal/proto.js';
import { wireDatatype } from './model-config.js';
import type { ExecuteContext, ExecuteOutput, ResolvedModel } from './model-definition.js';
import type { ServerState } from './server-state.js';

/** One `model_warmup` entry of a model's config, as a definition's `config.modelWarmup` gives it. */
type WarmupSample = NonNullable<NonNullable<ResolvedModel['config']>['modelWarmup']>[number];

const now = () => process.hrtime.bigint();

function sampleError(model: ResolvedModel, sample: string, text: string): InfergateError {
  return new InfergateError(
    ErrorCode.InvalidArgument,
    `model '${model.name}': warmup sample '${sample}' ${text}`,
    {
      model: model.name,
    },
  );
}

/**
 * The ModelInfer request a warm-up sample stands for, as Triton builds it: `batch_size` rows of each
 * input (batching models; a model that does not batch takes exactly 1), every dimension fixed, zero
 * data or random bytes (BYTES elements are empty strings in both, as in Triton). Triton also reads
 * `input_data_file` from the model's `warmup/` folder; this server has no model folders.
 */
function warmupRequest(model: ResolvedModel, version: string, sample: WarmupSample): ModelInferRequest {
  const name = sample.name ?? '';
  const batchSize = sample.batchSize ?? 0;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw sampleError(model, name, 'needs a batch_size of at least 1');
  if (model.maxBatchSize === 0 && batchSize !== 1) {
    throw sampleError(
      model,
      name,
      `has batch_size ${batchSize}, but the model does not batch (only 1 is allowed)`,
    );
  }
  if (batchSize > Math.max(1, model.maxBatchSize)) {
    throw sampleError(
      model,
      name,
      `has batch_size ${batchSize}, above the model's max_batch_size ${model.maxBatchSize}`,
    );
  }
  const inputs: ModelInferRequest['inputs'] = [];
  const raws: Uint8Array[] = [];
  for (const [input, spec] of Object.entries(sample.inputs ?? {})) {
    const datatype = spec.dataType === undefined ? undefined : wireDatatype(spec.dataType);
    if (datatype === undefined) throw sampleError(model, name, `gives input '${input}' no data_type`);
    const dims = (spec.dims ?? []).map(Number);
    if (dims.some((dim) => !Number.isInteger(dim) || dim < 0)) {
      throw sampleError(
        model,
        name,
        `expects all variable-size dimensions of input '${input}' to be specified`,
      );
    }
    const shape = model.maxBatchSize > 0 ? [batchSize, ...dims] : dims;
    const elements = shape.reduce((product, dim) => product * dim, 1);
    // A BYTES element is a 4-byte length then its bytes: zeros are empty strings.
    const bytes = elements * (datatype === 'BYTES' ? 4 : elementSize(datatype));
    const data = spec.inputDataType?.case;
    const raw = new Uint8Array(bytes);
    if (data === 'randomData' && datatype !== 'BYTES') {
      for (let offset = 0; offset < bytes; offset++) raw[offset] = Math.floor(Math.random() * 256);
    } else if (data !== 'zeroData' && data !== 'randomData') {
      throw sampleError(
        model,
        name,
        data === 'inputDataFile'
          ? `reads input '${input}' from a file; this server has no model folder (use zero_data or random_data)`
          : `gives input '${input}' no input_data_type (zero_data or random_data)`,
      );
    }
    inputs.push({ name: input, datatype, shape: shape.map(BigInt) } as ModelInferRequest['inputs'][number]);
    raws.push(raw);
  }
  return create(ModelInferRequestSchema, {
    modelName: model.name,
    modelVersion: version,
    inputs,
    rawInputContents: raws,
  });
}

/**
 * Runs a model's `model_warmup` samples (its definition's `config.modelWarmup`) once it is loaded
 * and before it serves, each `count` times (0 means once), one after another, as Triton does. Each
 * run goes the way a ModelInfer request goes inside the server — the request decoded from its
 * bytes and checked against the model, `execute`, the response built and encoded — so that code has
 * run before the first real request. Like Triton, which executes warm-up requests straight on the
 * model instance (no scheduler) and whose backends report their statistics, each run counts in the
 * model's statistics (ModelStatistics' inference and execution counts, and `stats(model).executions`
 * and `rows`), but not as a request received (`stats(model).requests`). A sample that cannot be
 * built, or a run that fails, rejects with an `InfergateError` naming the sample; a run still going
 * after `timeoutMs` is aborted (its context's signal) and rejects with DEADLINE_EXCEEDED.
 */
export async function warmUpModel(
  state: ServerState,
  model: ResolvedModel,
  timeoutMs: number,
): Promise<void> {
  const version = model.versions.reduce((best, candidate) =>
    Number(candidate) > Number(best) ? candidate : best,
  );
  for (const sample of model.config?.modelWarmup ?? []) {
    const message = warmupRequest(model, version, sample);
    const bytes = toBinary(ModelInferRequestSchema, message);
    const runs = Math.max(1, sample.count ?? 0);
    for (let run = 0; run < runs; run++) {
      const started = now();
      let executing = false;
      const controller = new AbortController();
      let timer: LongTimer | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setLongTimeout(() => {
          const error = new InfergateError(
            ErrorCode.DeadlineExceeded,
            `model '${model.name}': warmup sample '${sample.name ?? ''}' (run ${run + 1} of ${runs}) did not finish within ${timeoutMs} ms`,
            { model: model.name },
          );
          controller.abort(error);
          reject(error);
        }, timeoutMs);
      });
      timedOut.catch(() => {});
      try {
        const request = readInferRequest(
          model,
          version,
          fromBinary(ModelInferRequestSchema, bytes),
          {},
          state.shm,
        );
        const inputDone = now();
        let inferStart = inputDone;
        const context: ExecuteContext = {
          signal: controller.signal,
          computeStarted(startedAt?: bigint) {
            inferStart = startedAt ?? now();
          },
        };
        state.stats.executionStarted(model.name, request.batchSize);
        executing = true;
        const outputs = await Promise.race([
          model.executeStream === undefined
            ? (model.execute as NonNullable<typeof model.execute>)(request, context)
            : firstResponse(model.executeStream(request, context)),
          timedOut,
        ]);
        const built = now();
        serializeInferResponse(buildInferResponse(request, outputs, { batching: model.maxBatchSize > 0 }));
        state.inference.succeeded(model.name, version, {
          batchSize: request.batchSize,
          queueNs: inferStart - inputDone,
          computeInputNs: inputDone - started,
          computeInferNs: built - inferStart,
          computeOutputNs: now() - built,
          totalNs: now() - started,
        });
      } catch (error) {
        if (controller.signal.aborted && error === controller.signal.reason) throw error;
        throw new InfergateError(
          ErrorCode.InvalidArgument,
          `model '${model.name}': failed to run warmup sample '${sample.name ?? ''}': ${(error as Error).message}`,
          { model: model.name, cause: error },
        );
      } finally {
        clearLongTimer(timer);
        if (executing) state.stats.executionEnded(model.name);
      }
    }
  }
}

/** The first response of a streaming model (a warm-up takes one and stops the stream). */
async function firstResponse(
  responses: AsyncIterable<readonly ExecuteOutput[]>,
): Promise<readonly ExecuteOutput[]> {
  for await (const outputs of responses) return outputs;
  return [];
}

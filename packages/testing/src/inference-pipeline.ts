import type { RpcContext } from './handler-table.js';
import { readInferRequest } from './infer-request.js';
import { buildInferResponse, corruptInferResponse, type OutputPlacement } from './infer-response.js';
import { isAborted, type LazySignal } from './internal/call-context.js';
import { ANSWER_EARLY, type AnswerEarly, type EarlyAnswerContext } from './internal/early-answer.js';
import { status } from './internal/grpc-status.js';
import { fromWireParameters, integerParameter } from './internal/parameters.js';
import type { ModelInferRequest, ModelInferResponse } from './internal/proto.js';
import { sleep } from './internal/sleep.js';
import type { ExecuteContext, ExecuteOutput, SequenceContext } from './model-definition.js';
import { RpcError, toRpcError } from './rpc-error.js';
import type { ServerState } from './server-state.js';
import { sharedMemoryRef } from './shared-memory.js';

/** Which RPC runs the request: ModelInfer refuses decoupled models, as Triton does. */
export type InferenceMode = 'unary' | 'stream';

/** Thrown once the model and version are resolved, so the stream can report them with the error. */
export class ExecutionError extends RpcError {
  readonly model: string;
  readonly version: string;

  constructor(cause: RpcError, model: string, version: string) {
    super(cause.code, cause.message);
    this.model = model;
    this.version = version;
  }
}

const now = () => process.hrtime.bigint();

/** Configured output ranks per model's `outputs` list, worked out once per list. */
const ranksByOutputs = new WeakMap<object, Readonly<Record<string, number>>>();

function ranksOf(outputs: readonly { readonly name: string; readonly dims: readonly number[] }[]) {
  let ranks = ranksByOutputs.get(outputs);
  if (ranks === undefined) {
    ranks = Object.fromEntries(outputs.map((spec) => [spec.name, spec.dims.length]));
    ranksByOutputs.set(outputs, ranks);
  }
  return ranks;
}

function placements(message: ModelInferRequest): Map<string, OutputPlacement> {
  const out = new Map<string, OutputPlacement>();
  for (const output of message.outputs) {
    const parameters = fromWireParameters(output.parameters);
    const k = integerParameter(parameters, 'classification');
    const shm = sharedMemoryRef(parameters, output.name);
    out.set(output.name, {
      ...(k !== undefined && k > 0 ? { classification: k } : {}),
      ...(shm ? { shm } : {}),
    });
  }
  return out;
}

/**
 * One inference request, as ModelInfer and ModelStreamInfer share it: injected fault → model lookup →
 * Triton's validation (shared memory inputs included) → sequence bookkeeping → `execute` or
 * `executeStream` → responses (classification, shared memory outputs). Yields every response; counts
 * and times everything for ModelStatistics.
 */
export async function* runInference(
  state: ServerState,
  message: ModelInferRequest,
  context: RpcContext,
  mode: InferenceMode,
): AsyncGenerator<ModelInferResponse, void, undefined> {
  const counters = state.stats.of(message.modelName);
  counters.requests += 1;
  const fault = state.faults.take(message.modelName);
  let resolved: ReturnType<typeof state.models.resolve>;
  try {
    if (fault !== undefined) {
      await sleep(fault.delayMs, context.signal);
      if (fault.code !== undefined && fault.code !== status.OK) throw new RpcError(fault.code, fault.message);
    }
    resolved = state.models.resolve(message.modelName, message.modelVersion);
    if (mode === 'unary' && resolved.model.decoupled === true) {
      throw new RpcError(
        status.UNIMPLEMENTED,
        "ModelInfer RPC doesn't support models with decoupled transaction policy",
      );
    }
  } catch (error) {
    if (!isAborted(context)) counters.failures += 1;
    throw error;
  }
  const { model, version } = resolved;
  const started = now();
  let sequence: SequenceContext | undefined;
  let executing = false;
  try {
    const request = readInferRequest(model, version, message, context.metadata, state.shm);
    const outputPlacements = placements(message);
    if (model.sequenceBatching === true) sequence = state.sequences.begin(model.name, request.parameters);
    const inputDone = now();
    let inferStart = inputDone;
    let queueNs = 0n;
    const executeContext: ExecuteContext & LazySignal = {
      // Read on demand: the call's controller is made only for a model that reads its signal.
      get signal() {
        return context.signal;
      },
      get aborted() {
        return isAborted(context);
      },
      ...(sequence ? { sequence } : {}),
      computeStarted(startedAt?: bigint) {
        const at = startedAt ?? now();
        queueNs = at - inputDone;
        inferStart = at;
      },
    };
    const respond = (outputs: readonly ExecuteOutput[], count = true) => {
      const response = buildInferResponse(request, outputs, {
        placements: outputPlacements,
        shm: state.shm,
        batching: model.maxBatchSize > 0,
        ranks: ranksOf(model.outputs),
        ...(model.labels ? { labels: model.labels } : {}),
      });
      if (count) counters.responses += 1;
      return fault?.malformed ? corruptInferResponse(response) : response;
    };
    state.stats.executionStarted(model.name, request.batchSize);
    executing = true;
    let inferNs = 0n;
    let outputNs = 0n;
    if (model.executeStream !== undefined) {
      let index = 0;
      let last = inferStart;
      for await (const outputs of model.executeStream(request, executeContext)) {
        if (isAborted(context)) break;
        const built = now();
        const response = respond(outputs);
        const sent = now();
        inferNs += built - last;
        outputNs += sent - built;
        if (model.decoupled === true) {
          state.inference.response(model.name, version, index, 'success', built - last, sent - built);
        }
        index += 1;
        yield response;
        last = now();
        if (isAborted(context)) break;
      }
      if (isAborted(context)) throw new RpcError(status.CANCELLED, 'the stream was cancelled');
      if (model.decoupled !== true && index !== 1) {
        throw new RpcError(status.INTERNAL, `model '${model.name}' must produce exactly one response`);
      }
    } else {
      // A unary call whose transport holds answers (decision 0023): the model may hand its outputs
      // over before its execution ends, with the end as `until`.
      let until: Promise<void> | undefined;
      if (mode === 'unary' && (context as EarlyAnswerContext).earlyAnswers === true) {
        (executeContext as { [ANSWER_EARLY]?: AnswerEarly })[ANSWER_EARLY] = (promise) => {
          until = promise;
        };
      }
      const outputs = await (model.execute as NonNullable<typeof model.execute>)(request, executeContext);
      const built = now();
      const response = respond(outputs, until === undefined);
      outputNs = now() - built;
      if (until === undefined) {
        inferNs = built - inferStart;
        yield response;
      } else {
        // Built while the execution runs; the transport writes it when `until` settles. The
        // execution's time counts to its end, and the bookkeeping waits for the next turn (after
        // the answer's write, which is the end's turn).
        (context as EarlyAnswerContext).answerAfter = until;
        yield response;
        await until;
        inferNs = now() - inferStart;
        counters.responses += 1;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    state.inference.succeeded(model.name, version, {
      batchSize: request.batchSize,
      queueNs,
      computeInputNs: inputDone - started,
      computeInferNs: inferNs,
      computeOutputNs: outputNs,
      totalNs: now() - started,
    });
  } catch (error) {
    if (!isAborted(context)) {
      counters.failures += 1;
      state.inference.failed(model.name, version, now() - started);
    }
    const failure = toRpcError(error);
    throw executing ? new ExecutionError(failure, model.name, version) : failure;
  } finally {
    if (executing) state.stats.executionEnded(model.name);
    if (sequence !== undefined) state.sequences.finish(model.name, sequence);
  }
}

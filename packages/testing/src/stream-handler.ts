import { create } from '@bufbuild/protobuf';
import { ExecutionError, runInference } from './inference-pipeline.js';
import { status } from './internal/grpc-status.js';
import { toWireParameters } from './internal/parameters.js';
import {
  type ModelInferRequest,
  type ModelInferResponse,
  type ModelStreamInferResponse,
  ModelStreamInferResponseSchema,
} from './internal/proto.js';
import { checkAccess } from './restriction.js';
import { RpcError, toRpcError } from './rpc-error.js';
import type { ServerState } from './server-state.js';

/** What ModelStreamInfer needs of its call, whatever the transport (grpc-js or node:http2). */
export interface StreamCallSink {
  /** Request metadata as recorded (`-bin` values base64). */
  readonly metadata: Readonly<Record<string, string>>;
  write(message: ModelStreamInferResponse): void;
  /** Ends the stream with status OK. */
  end(): void;
  /** Ends the stream with a failing status. */
  fail(code: number, message: string): void;
}

/** What the transport tells the handler about the call; one object per stream. */
export interface StreamCallEvents {
  message(request: ModelInferRequest): void;
  /** The client half-closed: no more requests. */
  halfClose(): void;
  /** The client cancelled, the deadline passed, the stream failed or the server was killed. */
  cancel(): void;
}

const ignored: StreamCallEvents = { message() {}, halfClose() {}, cancel() {} };

const finalFlag = (final: boolean) => toWireParameters({ triton_final_response: final });

/**
 * ModelStreamInfer as Triton's stream_infer_handler.cc does it: every request on the stream runs
 * concurrently; each response goes out as `infer_response` carrying `triton_final_response` (true on
 * the one response of a non-decoupled model, false on a decoupled model's responses, then an empty
 * final response if the request set `triton_enable_empty_final_response`); a failed request sends
 * `error_message` (with `infer_response.id` set) and the stream goes on. The stream ends OK once the
 * client half-closes and every request is done; cancelling it aborts the executions in progress.
 */
export function handleModelStreamInfer(state: ServerState, call: StreamCallSink): StreamCallEvents {
  const metadata = call.metadata;
  state.calls.record({ method: 'ModelStreamInfer', model: undefined, metadata, time: Date.now() });
  try {
    checkAccess('ModelStreamInfer', metadata, state.restrictions, state.identity.extensions);
  } catch (error) {
    const failure = toRpcError(error);
    call.fail(failure.code, failure.message);
    return ignored;
  }
  const controller = new AbortController();
  state.inFlight.add(controller);
  let pending = 0;
  let halfClosed = false;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    state.inFlight.delete(controller);
    if (!controller.signal.aborted) call.end();
  };
  const write = (message: Omit<ModelStreamInferResponse, '$typeName'>) => {
    if (!closed && !controller.signal.aborted) {
      call.write(create(ModelStreamInferResponseSchema, message));
    }
  };
  return {
    message(request) {
      if (closed || controller.signal.aborted) return;
      pending += 1;
      void runOne(state, request, metadata, controller.signal, write).finally(() => {
        pending -= 1;
        if (halfClosed && pending === 0) close();
      });
    },
    halfClose() {
      halfClosed = true;
      if (pending === 0) close();
    },
    cancel() {
      controller.abort(new RpcError(status.CANCELLED, 'the client cancelled the stream'));
      closed = true;
      state.inFlight.delete(controller);
    },
  };
}

async function runOne(
  state: ServerState,
  message: ModelInferRequest,
  metadata: Readonly<Record<string, string>>,
  signal: AbortSignal,
  write: (message: Omit<ModelStreamInferResponse, '$typeName'>) => void,
): Promise<void> {
  const empty = message.parameters.triton_enable_empty_final_response?.parameterChoice;
  const decoupled = state.models.find(message.modelName, message.modelVersion)?.model.decoupled === true;
  let finished = false;
  try {
    if (empty !== undefined && empty.case !== 'boolParam') {
      throw new RpcError(
        status.INVALID_ARGUMENT,
        "invalid value type for 'triton_enable_empty_final_response' parameter, expected bool_param.",
      );
    }
    await state.gate.wait(signal);
    let last: ModelInferResponse | undefined;
    for await (const response of runInference(state, message, { metadata, signal }, 'stream')) {
      last = response;
      write({
        errorMessage: '',
        inferResponse: { ...response, parameters: { ...response.parameters, ...finalFlag(!decoupled) } },
      });
    }
    finished = true;
    if (decoupled && empty?.value === true) {
      write({
        errorMessage: '',
        inferResponse: {
          $typeName: 'inference.ModelInferResponse',
          modelName: last?.modelName ?? message.modelName,
          modelVersion: last?.modelVersion ?? message.modelVersion,
          id: message.id,
          parameters: finalFlag(true),
          outputs: [],
          rawOutputContents: [],
        },
      });
    }
  } catch (error) {
    if (signal.aborted) {
      if (!finished) state.stats.of(message.modelName).cancellations += 1;
      return;
    }
    const failure = toRpcError(error);
    const executed = error instanceof ExecutionError;
    write({
      errorMessage: failure.message,
      inferResponse: {
        $typeName: 'inference.ModelInferResponse',
        id: message.id,
        modelName: executed ? error.model : '',
        modelVersion: executed ? error.version : '',
        parameters: executed ? finalFlag(true) : {},
        outputs: [],
        rawOutputContents: [],
      },
    });
  }
}

import { ErrorCode, InfergateError } from '../errors.js';
import type { GrpcTransport } from '../grpc-transport.js';
import type { InferRequest } from '../transport.js';

const METADATA_TIMEOUT_MS = 2000;

/**
 * Why the text is missing: Triton ends some `grpc-message` values (its shape errors) with a space,
 * and Node's HTTP/2 layer drops a header value with trailing whitespace unless the session sets
 * `strictFieldWhitespaceValidation: false` (Node ≥ 22.x and 24.2), which grpc-js does not. See
 * docs/decisions/0003-interop-suite-findings.md.
 */
const LOST =
  "Triton's own message was lost on the way (Node's HTTP/2 drops a grpc-message ending in a space)";

/** True when a mapped gRPC error came with no message at all. */
export function lostMessage(error: unknown): error is InfergateError {
  if (!(error instanceof InfergateError) || error.code !== ErrorCode.InvalidArgument) return false;
  const details = (error.cause as { details?: unknown } | undefined)?.details;
  return error.grpcCode === 3 && typeof details === 'string' && details.trim() === '';
}

const formatShape = (shape: readonly (number | bigint)[]) => `[${shape.join(',')}]`;

function fits(sent: readonly number[], declared: readonly bigint[]): boolean {
  return (
    sent.length === declared.length && declared.every((dim, i) => dim === -1n || Number(dim) === sent[i])
  );
}

/**
 * Rebuilds a useful message for an INVALID_ARGUMENT whose text was lost: the input whose shape
 * disagrees with the model's metadata, the shape sent and the shape declared. Asks the server for
 * the metadata (bounded); if that fails too, says what is known.
 */
export async function explainLostMessage(
  transport: GrpcTransport,
  request: InferRequest,
  error: InfergateError,
): Promise<InfergateError> {
  const rebuild = (text: string, details: Record<string, unknown>) =>
    new InfergateError(
      ErrorCode.InvalidArgument,
      `${text} (${LOST}) (model '${request.model}' at ${transport.address})`,
      {
        model: request.model,
        endpoint: transport.address,
        ...(error.requestId !== undefined ? { requestId: error.requestId } : {}),
        ...(error.grpcCode !== undefined ? { grpcCode: error.grpcCode } : {}),
        cause: error.cause,
        details: { ...details, tritonMessageLost: true },
      },
    );
  let metadata: { inputs: { name: string; datatype: string; shape: bigint[] }[] };
  try {
    // The descriptors are in grpc-wire.ts, which an http2-engine process may not have loaded yet.
    const { wire, options } = await transport.waitForWire({
      signal: AbortSignal.timeout(METADATA_TIMEOUT_MS),
    });
    const method = wire.GRPCInferenceService.method.modelMetadata;
    metadata = await transport.unary(
      method,
      wire.create(method.input, { name: request.model, version: request.modelVersion ?? '' }),
      options,
    );
  } catch {
    return rebuild('Triton rejected the request as invalid', {});
  }
  for (const input of request.inputs) {
    const declared = metadata.inputs.find((candidate) => candidate.name === input.name);
    if (declared === undefined || fits(input.shape, declared.shape)) continue;
    return rebuild(
      `unexpected shape for input '${input.name}' for model '${request.model}': sent ${formatShape(input.shape)}, the model's metadata says ${formatShape(declared.shape)} (-1 is any size)`,
      { input: input.name, sentShape: [...input.shape], modelShape: declared.shape.map(Number) },
    );
  }
  return rebuild(
    `Triton rejected the request as invalid; every input's shape fits the model's metadata (${metadata.inputs
      .map((declared) => `${declared.name} ${formatShape(declared.shape)}`)
      .join(', ')})`,
    {},
  );
}

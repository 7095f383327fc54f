import {
  type DataType,
  decodeBytesElements,
  decodeTensorData,
  elementSize,
  isDataType,
  type Parameters,
  type TensorOutputData,
} from '@infergate/core';
import { fromWireParameters, integerParameter } from './internal/parameters.js';
import type { ModelInferRequest } from './internal/proto.js';
import { configTypeName } from './model-config.js';
import type { ExecuteInput, ExecuteRequest, ResolvedModel, TensorSpec } from './model-definition.js';
import { invalidArgument } from './rpc-error.js';
import { type SharedMemoryRegistry, sharedMemoryRef } from './shared-memory.js';

class DecodedInput implements ExecuteInput {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly raw: Uint8Array;
  readonly parameters: Parameters;
  #data: TensorOutputData | undefined;

  constructor(name: string, datatype: DataType, shape: number[], raw: Uint8Array, parameters: Parameters) {
    this.name = name;
    this.datatype = datatype;
    this.shape = shape;
    this.raw = raw;
    this.parameters = parameters;
  }

  get data(): TensorOutputData {
    // Decoding is lazy so that pass-through models (identity) never touch the elements.
    this.#data ??= decodeTensorData(this);
    return this.#data;
  }
}

const formatShape = (shape: readonly number[]) => `[${shape.join(',')}]`;
const quoteList = (names: readonly string[]) => `[${names.map((name) => `'${name}'`).join(', ')}]`;

function matches(expected: readonly number[], actual: readonly number[]): boolean {
  return expected.length === actual.length && expected.every((dim, i) => dim === -1 || dim === actual[i]);
}

/**
 * Checks one ModelInfer request against the model's configuration the way Triton does and returns
 * what `execute` receives. Every failure is INVALID_ARGUMENT with Triton's wording.
 */
export function readInferRequest(
  model: ResolvedModel,
  version: string,
  message: ModelInferRequest,
  metadata: Readonly<Record<string, string>>,
  shm?: SharedMemoryRegistry,
): ExecuteRequest {
  const prefix = `[request id: ${message.id === '' ? '<id_unknown>' : message.id}] `;
  const fail = (text: string) => invalidArgument(prefix + text);
  const forModel = `for model '${model.name}'`;
  const batching = model.maxBatchSize > 0;
  // As in Triton, raw_input_contents holds entries for the inputs not in shared memory, in order.
  const raws = message.rawInputContents;
  const inputParameters = message.inputs.map((tensor) => fromWireParameters(tensor.parameters));
  const shmRefs = message.inputs.map((tensor, index) =>
    sharedMemoryRef(inputParameters[index] as Parameters, tensor.name),
  );
  const rawCount = shmRefs.filter((ref) => ref === undefined).length;
  if (raws.length !== rawCount) {
    if (raws.length === 0 && rawCount > 0) {
      throw fail(`infergate-testing reads tensors from raw_input_contents only; none were sent ${forModel}`);
    }
    throw fail(`expected ${rawCount} raw_input_contents, got ${raws.length} ${forModel}`);
  }
  let rawIndex = 0;

  const inputs: DecodedInput[] = [];
  let batchSize: number | undefined;
  for (const [index, tensor] of message.inputs.entries()) {
    const { name } = tensor;
    const spec: TensorSpec | undefined = model.inputs.find((candidate) => candidate.name === name);
    if (spec === undefined) throw fail(`unexpected inference input '${name}' ${forModel}`);
    if (inputs.some((input) => input.name === name)) throw fail(`input '${name}' is given twice ${forModel}`);
    const { datatype } = tensor;
    if (!isDataType(datatype))
      throw fail(`invalid datatype '${datatype}' for inference input '${name}' ${forModel}`);
    if (!spec.anyDatatype && datatype !== spec.datatype) {
      throw fail(
        `unexpected datatype ${configTypeName(datatype)} for inference input '${name}', ` +
          `expecting ${configTypeName(spec.datatype)} ${forModel}`,
      );
    }
    const shape = tensor.shape.map((dim) => Number(dim));
    if (shape.some((dim) => !Number.isSafeInteger(dim) || dim < 0)) {
      throw fail(`invalid shape ${formatShape(shape)} for input '${name}' ${forModel}`);
    }
    if (!spec.anyShape) {
      const expected = batching ? [-1, ...spec.dims] : spec.dims;
      if (!matches(expected, shape)) {
        const note =
          batching && shape.length === spec.dims.length
            ? '. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be ' +
              'prepended to each input shape'
            : '';
        throw fail(
          `unexpected shape for input '${name}' ${forModel}. Expected ${formatShape(expected)}, got ${formatShape(shape)}${note}`,
        );
      }
    }
    if (batching && shape.length > 0) {
      const rows = shape[0] as number;
      if (batchSize === undefined) batchSize = rows;
      else if (rows !== batchSize)
        throw fail(`input '${name}' batch size does not match other inputs for '${model.name}'`);
    }
    const ref = shmRefs[index];
    if (ref !== undefined && shm === undefined) throw fail(`shared memory is not available ${forModel}`);
    const raw =
      ref === undefined ? (raws[rawIndex++] as Uint8Array) : (shm as SharedMemoryRegistry).read(ref);
    const count = shape.reduce((product, dim) => product * dim, 1);
    if (datatype === 'BYTES') {
      let elements: number;
      try {
        elements = decodeBytesElements(raw).length;
      } catch {
        throw fail(`unable to parse the string elements of inference input '${name}' ${forModel}`);
      }
      if (elements !== count) {
        throw fail(
          `expected ${count} string elements for inference input '${name}' ${forModel}, got ${elements}`,
        );
      }
    } else if (raw.byteLength !== count * elementSize(datatype)) {
      throw fail(
        `input byte size mismatch for input '${name}' ${forModel}. Expected ${count * elementSize(datatype)}, got ${raw.byteLength}`,
      );
    }
    inputs.push(new DecodedInput(name, datatype, shape, raw, inputParameters[index] as Parameters));
  }

  const missing = model.inputs.filter(
    (spec) => !spec.optional && !inputs.some((input) => input.name === spec.name),
  );
  if (missing.length > 0) {
    const required = model.inputs.filter((spec) => !spec.optional).length;
    throw fail(
      `expected ${required} inputs but got ${inputs.length} inputs ${forModel}. ` +
        `Got input(s) ${quoteList(inputs.map((input) => input.name))}, but missing required input(s) ` +
        `${quoteList(missing.map((spec) => spec.name))}. Please provide all required input(s).`,
    );
  }
  if (
    batchSize !== undefined &&
    batchSize > model.maxBatchSize &&
    !inputs.every((input) => isAnyShape(model, input))
  ) {
    throw fail(`inference request batch-size must be <= ${model.maxBatchSize} for '${model.name}'`);
  }

  const requestedOutputs: string[] = [];
  for (const output of message.outputs) {
    if (!model.outputs.some((spec) => spec.name === output.name)) {
      throw fail(`unexpected inference output '${output.name}' ${forModel}`);
    }
    if (!requestedOutputs.includes(output.name)) requestedOutputs.push(output.name);
  }

  const parameters = fromWireParameters(message.parameters);
  const priority = parameters.priority;
  if (
    priority !== undefined &&
    (typeof integerParameter(parameters, 'priority') !== 'number' || Number(priority) < 0)
  ) {
    throw fail("invalid value for 'priority', expected value >= 0.");
  }
  const timeout = parameters.timeout;
  if (timeout !== undefined && integerParameter(parameters, 'timeout') === undefined) {
    throw fail("invalid value type for 'timeout' parameter, expected int64_param.");
  }
  return {
    model: model.name,
    version,
    id: message.id,
    parameters,
    priority: integerParameter(parameters, 'priority') ?? 0,
    timeoutUs: integerParameter(parameters, 'timeout') ?? 0,
    inputs,
    input(name: string): ExecuteInput {
      const found = inputs.find((input) => input.name === name);
      if (found === undefined) throw fail(`model '${model.name}' needs input '${name}'`);
      return found;
    },
    requestedOutputs: requestedOutputs.length > 0 ? requestedOutputs : model.outputs.map((spec) => spec.name),
    outputsNamed: requestedOutputs.length > 0,
    batchSize: batching ? (batchSize ?? 1) : 1,
    metadata,
  };
}

function isAnyShape(model: ResolvedModel, input: ExecuteInput): boolean {
  return model.inputs.find((spec) => spec.name === input.name)?.anyShape === true;
}

import { create } from '@bufbuild/protobuf';
import type { Parameters, ParameterValue } from '@infergate/core';
import { type InferParameter, InferParameterSchema } from './proto.js';

const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER);
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);
const INT64_MAX = 2n ** 63n - 1n;

/** Wire parameters as plain values: 64-bit integers become numbers when they fit, else bigints. */
export function fromWireParameters(map: Readonly<Record<string, InferParameter>>): Parameters {
  const out: Record<string, ParameterValue> = {};
  for (const [name, parameter] of Object.entries(map)) {
    const choice = parameter.parameterChoice;
    switch (choice.case) {
      case 'boolParam':
      case 'stringParam':
      case 'doubleParam':
        out[name] = choice.value;
        break;
      case 'int64Param':
      case 'uint64Param':
        out[name] =
          choice.value >= SAFE_MIN && choice.value <= SAFE_MAX ? Number(choice.value) : choice.value;
        break;
      default:
        break;
    }
  }
  return out;
}

function toWire(value: ParameterValue): InferParameter['parameterChoice'] {
  switch (typeof value) {
    case 'boolean':
      return { case: 'boolParam', value };
    case 'string':
      return { case: 'stringParam', value };
    case 'number':
      return Number.isSafeInteger(value)
        ? { case: 'int64Param', value: BigInt(value) }
        : { case: 'doubleParam', value };
    case 'bigint':
      return value > INT64_MAX ? { case: 'uint64Param', value } : { case: 'int64Param', value };
    default:
      if (value.kind === 'double') return { case: 'doubleParam', value: value.value };
      return { case: value.kind === 'int64' ? 'int64Param' : 'uint64Param', value: value.value };
  }
}

export function toWireParameters(parameters: Parameters | undefined): Record<string, InferParameter> {
  const out: Record<string, InferParameter> = {};
  if (parameters === undefined) return out;
  for (const [name, value] of Object.entries(parameters)) {
    out[name] = create(InferParameterSchema, { parameterChoice: toWire(value) });
  }
  return out;
}

/** A parameter read as an integer, if it is one. */
export function integerParameter(parameters: Parameters, name: string): number | undefined {
  const value = parameters[name];
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'object' && value.kind !== 'double') return Number(value.value);
  return undefined;
}

import type { DataType, TensorInputData } from '@infergate/core';

/**
 * The type of a value flowing between steps, declared on each step's inputs and outputs so a bad
 * graph is refused when it is built. A tensor's `datatype` and `shape` are checked where both sides
 * declare them (`-1` matches any size, an absent shape any shape).
 */
export type PortType =
  | { kind: 'tensor'; datatype?: DataType | undefined; shape?: readonly number[] | undefined }
  | { kind: 'text' }
  | { kind: 'json' };

/** A tensor as it flows between steps (and as a Triton step takes and returns it). */
export interface Tensor {
  datatype: DataType;
  shape: readonly number[];
  data: TensorInputData;
}

export function describePort(type: PortType): string {
  if (type.kind !== 'tensor') return type.kind;
  const shape = type.shape === undefined ? '' : `[${type.shape.join(', ')}]`;
  return `tensor ${type.datatype ?? 'any'}${shape}`;
}

/** Why a value of type `from` cannot feed an input of type `to`; undefined when it can. */
export function portMismatch(from: PortType, to: PortType): string | undefined {
  if (to.kind === 'json') return undefined;
  if (from.kind !== to.kind) return `${describePort(from)} cannot feed ${describePort(to)}`;
  if (from.kind !== 'tensor' || to.kind !== 'tensor') return undefined;
  if (from.datatype !== undefined && to.datatype !== undefined && from.datatype !== to.datatype) {
    return `datatype ${from.datatype} cannot feed ${to.datatype}`;
  }
  if (from.shape === undefined || to.shape === undefined) return undefined;
  if (from.shape.length !== to.shape.length) {
    return `shape [${from.shape.join(', ')}] has rank ${from.shape.length}, [${to.shape.join(', ')}] needs ${to.shape.length}`;
  }
  const clash = from.shape.findIndex(
    (dim, index) => dim !== -1 && to.shape?.[index] !== -1 && dim !== to.shape?.[index],
  );
  return clash === -1
    ? undefined
    : `shape [${from.shape.join(', ')}] does not fit [${to.shape.join(', ')}] (dim ${clash})`;
}

/** Why a run-time value does not match its declared type; undefined when it does. */
export function valueMismatch(type: PortType, value: unknown): string | undefined {
  switch (type.kind) {
    case 'json':
      return undefined;
    case 'text':
      return typeof value === 'string' ? undefined : `expected text, got ${typeof value}`;
    case 'tensor': {
      if (!isTensor(value)) return 'expected a tensor { datatype, shape, data }';
      const actual: PortType = { kind: 'tensor', datatype: value.datatype, shape: value.shape };
      return portMismatch(actual, type);
    }
  }
}

export function isTensor(value: unknown): value is Tensor {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Tensor).datatype === 'string' &&
    Array.isArray((value as Tensor).shape) &&
    typeof (value as Tensor).data === 'object'
  );
}

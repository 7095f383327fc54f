import { InfergateError } from '@infergate/core';
import { STATUS_NAMES, status } from './internal/grpc-status.js';

/** gRPC status names (`'UNAVAILABLE'`, …) as grpc-js spells them. */
export type StatusName = Exclude<keyof typeof status, 'OK'>;

/** A gRPC status given as its number (`14`) or its name (`'UNAVAILABLE'`). */
export type StatusCode = number | StatusName;

const statusOf = (name: string): number | undefined =>
  Object.hasOwn(status, name) ? status[name as keyof typeof status] : undefined;

export function statusNumber(code: StatusCode): number {
  if (typeof code === 'number') {
    if (!Number.isInteger(code) || code < 0 || code > 16)
      throw new RangeError(`${code} is not a gRPC status`);
    return code;
  }
  const value = statusOf(code);
  if (value === undefined) throw new RangeError(`'${String(code)}' is not a gRPC status name`);
  return value;
}

export function statusName(code: number): string {
  return STATUS_NAMES[code] ?? `STATUS_${code}`;
}

/**
 * The error a model's `execute` (or the server itself) throws to answer with a chosen gRPC status.
 * Anything else a model throws becomes INTERNAL.
 */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  /** gRPC status number. */
  readonly code: number;

  constructor(code: StatusCode, message: string) {
    super(message);
    this.code = statusNumber(code);
  }
}

export function notFound(message: string): RpcError {
  return new RpcError(status.NOT_FOUND, message);
}

export function invalidArgument(message: string): RpcError {
  return new RpcError(status.INVALID_ARGUMENT, message);
}

/** Turns whatever a handler threw into the status to answer with. */
export function toRpcError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  if (error instanceof InfergateError) {
    const code = statusOf(error.code);
    return new RpcError(code ?? status.UNKNOWN, error.rawMessage);
  }
  if (error instanceof Error && error.name === 'AbortError')
    return new RpcError(status.CANCELLED, error.message);
  const message = error instanceof Error ? error.message : String(error);
  return new RpcError(status.INTERNAL, message);
}

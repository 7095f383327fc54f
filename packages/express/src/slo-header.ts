import {
  CALL_SLO_CONTEXT,
  type CallOptions,
  type CallSlo,
  ErrorCode,
  InfergateError,
  withContextValue,
} from '@infergate/core';
import type { HttpRequest } from './http-types.js';

/** The request header stating a time-to-first-token objective, as the Gateway API Inference Extension names it. */
export const SLO_TTFT_HEADER = 'x-slo-ttft-ms';

const MILLISECONDS = /^\d+(?:\.\d+)?$/;

/**
 * The SLO a request states in `x-slo-ttft-ms` (milliseconds to the first token); undefined when it
 * states none; INVALID_ARGUMENT (HTTP 400) for a value that is not a positive number.
 */
export function sloOfRequest(request: HttpRequest): CallSlo | undefined {
  const raw = request.headers[SLO_TTFT_HEADER];
  if (raw === undefined) return undefined;
  const text = (Array.isArray(raw) ? (raw[0] ?? '') : raw).trim();
  const value = Number(text);
  if (!MILLISECONDS.test(text) || !(value > 0) || !Number.isFinite(value)) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `${SLO_TTFT_HEADER} must be a positive number of milliseconds, got '${text.slice(0, 32)}'`,
      { details: { header: SLO_TTFT_HEADER } },
    );
  }
  return { ttftMs: value };
}

/**
 * `options` with the SLO in their context, where a router reads it to admit the call only to a
 * target that can answer in time; `options` themselves when there is no SLO.
 */
export function withSlo<O extends CallOptions>(options: O, slo: CallSlo | undefined): O {
  if (slo === undefined) return options;
  return { ...options, context: withContextValue(options.context, CALL_SLO_CONTEXT, slo) };
}

import { createContextKey, getContextValue } from './context-key.js';
import type { CallOptions } from './transport.js';

/**
 * A call's latency objective, as its caller or an HTTP front door states it (`x-slo-ttft-ms`). A
 * router admits the call only to a target whose observed latency can meet it; the call's own
 * deadline (`timeoutMs`) still decides when it is given up.
 */
export interface CallSlo {
  /** Time to the first answer (a stream's first chunk, a unary call's answer), in ms. */
  ttftMs?: number;
}

/** Context key of a call's SLO: the Express middleware sets it, the router reads it. */
export const CALL_SLO_CONTEXT = createContextKey<CallSlo>('infergate.slo');

/** The SLO a call carries in its context; undefined when none. */
export function callSloOf(options: CallOptions | undefined): CallSlo | undefined {
  return getContextValue(options?.context, CALL_SLO_CONTEXT);
}

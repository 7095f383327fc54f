import type { CallOptions } from '@infergate/core';

/** Per-call options both routers read on top of `CallOptions`. */
export interface RouteCallOptions extends CallOptions {
  /**
   * Time to the first answer this call must meet, in ms: a target whose observed latency for the
   * model is longer is passed over, and with none left the call fails at once with
   * DEADLINE_EXCEEDED ("cannot meet deadline"). @default the context's `CALL_SLO_CONTEXT`, else none
   */
  sloTtftMs?: number;
  /**
   * The call may run twice without harm: with the router's `hedge` option, a slow first attempt
   * gets a second one on another target and the first answer wins. @default false
   */
  idempotent?: boolean;
  /**
   * Keeps this call on the same member of each group as other calls with this key (a session id,
   * a hash of the prompt's prefix, for KV and prompt-cache reuse). @default the router's `affinity.key`
   */
  affinityKey?: string;
  /**
   * The most this call may cost on any target, in USD (the target's `cost`, or the price list's
   * estimate for a chat call): a target dearer than that, or of unknown price, is never tried — a
   * fallback included — and with none left the call fails with BUDGET_EXCEEDED ("cost cap").
   * @default none
   */
  maxCostUsd?: number;
}

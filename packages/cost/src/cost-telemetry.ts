import { loadOtel, otelRegistered } from '@infergate/core/internal/lazy-otel';

/** Span attribute names set on the active span when a call's cost is known. */
export const COST_ATTRIBUTE = 'infergate.cost.usd';
export const TENANT_ATTRIBUTE = 'infergate.tenant';

/**
 * Puts a settled call's cost and tenant on the active span. Spans carry the tenant always: a span
 * is one call, not a time series, so the tenant costs no cardinality there (metrics: see
 * cost-metrics.ts). Token counts are the adapters' GenAI metrics, not recorded here twice.
 * While nothing is registered with the OpenTelemetry API there is no context manager, so no active
 * span: nothing to look up, and the API is not loaded (decision 0025, fourth addendum).
 */
export function recordCostOnSpan(costUsd: number | null, tenant: string | undefined): void {
  if (!otelRegistered()) return;
  const span = loadOtel().trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return;
  if (costUsd !== null) span.setAttribute(COST_ATTRIBUTE, costUsd);
  if (tenant !== undefined) span.setAttribute(TENANT_ATTRIBUTE, tenant);
}

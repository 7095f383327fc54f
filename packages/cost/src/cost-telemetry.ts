import { type Counter, type Histogram, metrics, trace } from '@opentelemetry/api';

/** Span attribute names set on the active span when a call's cost is known. */
export const COST_ATTRIBUTE = 'infergate.cost.usd';
export const TENANT_ATTRIBUTE = 'infergate.tenant';

interface Instruments {
  tokenUsage: Histogram;
  cost: Counter;
}

let instruments: Instruments | undefined;

// Created on first use: with no SDK registered the API hands out no-op instruments.
function get(): Instruments {
  if (!instruments) {
    const meter = metrics.getMeter('@infergate/cost');
    instruments = {
      tokenUsage: meter.createHistogram('gen_ai.client.token.usage', {
        description: 'Number of input and output tokens used',
        unit: '{token}',
      }),
      cost: meter.createCounter('infergate.cost', {
        description: 'Cost of calls, in US dollars',
        unit: 'USD',
      }),
    };
  }
  return instruments;
}

export interface CostSignal {
  costUsd: number | null;
  tenant: string | undefined;
  model: string | undefined;
  provider: string | undefined;
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

/** Records span attributes and metrics for one settled call. */
export function recordCostTelemetry(signal: CostSignal): void {
  const span = trace.getActiveSpan();
  if (span) {
    if (signal.costUsd !== null) span.setAttribute(COST_ATTRIBUTE, signal.costUsd);
    if (signal.tenant !== undefined) span.setAttribute(TENANT_ATTRIBUTE, signal.tenant);
  }
  const { tokenUsage, cost } = get();
  const attributes = attributeSets(signal);
  if (signal.inputTokens !== undefined) tokenUsage.record(signal.inputTokens, attributes.input);
  if (signal.outputTokens !== undefined) tokenUsage.record(signal.outputTokens, attributes.output);
  if (signal.costUsd !== null) cost.add(signal.costUsd, attributes.cost);
}

interface AttributeSets {
  input: Record<string, string>;
  output: Record<string, string>;
  cost: Record<string, string>;
}

// Attribute objects are reused per tenant/model/provider: building them on every call was a
// measurable share of the in-memory ledger's per-call time.
const attributeCache = new Map<string, AttributeSets>();

function attributeSets(signal: CostSignal): AttributeSets {
  const id = `${signal.tenant ?? ''}\u0001${signal.model ?? ''}\u0001${signal.provider ?? ''}`;
  let sets = attributeCache.get(id);
  if (sets) return sets;
  const base: Record<string, string> = {};
  if (signal.provider !== undefined) base['gen_ai.provider.name'] = signal.provider;
  if (signal.model !== undefined) base['gen_ai.request.model'] = signal.model;
  const costAttributes: Record<string, string> = {};
  if (signal.tenant !== undefined) costAttributes.tenant = signal.tenant;
  if (signal.model !== undefined) costAttributes.model = signal.model;
  if (signal.provider !== undefined) costAttributes.provider = signal.provider;
  sets = {
    input: { ...base, 'gen_ai.token.type': 'input' },
    output: { ...base, 'gen_ai.token.type': 'output' },
    cost: costAttributes,
  };
  if (attributeCache.size >= 10_000) attributeCache.clear();
  attributeCache.set(id, sets);
  return sets;
}

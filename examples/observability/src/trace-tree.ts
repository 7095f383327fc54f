import type { tracing } from '@opentelemetry/sdk-node';

const SHOWN = [
  'infergate.router',
  'infergate.target',
  'infergate.outcome',
  'infergate.cost.usd',
  'infergate.tenant',
  'infergate.batch.rows',
  'rpc.method',
  'rpc.grpc.status_code',
  'rpc.status_code',
];

function label(span: tracing.ReadableSpan): string {
  const attributes = SHOWN.filter((key) => span.attributes[key] !== undefined).map(
    (key) => `${key}=${String(span.attributes[key])}`,
  );
  const links = span.links.length === 0 ? '' : ` links=${span.links.length}`;
  const ms = (span.duration[0] * 1e3 + span.duration[1] / 1e6).toFixed(2);
  return `${span.name} (${ms} ms)${attributes.length > 0 ? ` ${attributes.join(' ')}` : ''}${links}`;
}

/** Every trace among `spans` as an ASCII tree, roots first in start order. */
export function renderTraces(spans: readonly tracing.ReadableSpan[]): string {
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  const byStart = [...spans].sort(
    (a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1],
  );
  const lines: string[] = [];
  const walk = (parent: tracing.ReadableSpan, indent: string) => {
    const children = byStart.filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId);
    children.forEach((child, index) => {
      const last = index === children.length - 1;
      lines.push(`${indent}${last ? '└─ ' : '├─ '}${label(child)}`);
      walk(child, `${indent}${last ? '   ' : '│  '}`);
    });
  };
  for (const root of byStart.filter((span) => !ids.has(span.parentSpanContext?.spanId ?? ''))) {
    lines.push(label(root));
    walk(root, '');
  }
  return lines.join('\n');
}

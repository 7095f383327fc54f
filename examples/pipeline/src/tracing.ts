import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/**
 * Registers an OpenTelemetry SDK that keeps finished spans in memory (swap the exporter for
 * `ConsoleSpanExporter` or an OTLP exporter in a real service).
 */
export function installTracing(): { spans(): ReadableSpan[]; uninstall(): Promise<void> } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    spans: () => exporter.getFinishedSpans(),
    async uninstall() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The spans of one trace as an indented tree, parents first. */
export function spanTree(spans: readonly ReadableSpan[]): string[] {
  const lines: string[] = [];
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  const childrenOf = (parent: string | undefined) =>
    spans
      .filter((span) => {
        const parentId = span.parentSpanContext?.spanId;
        return parent === undefined ? parentId === undefined || !ids.has(parentId) : parentId === parent;
      })
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
  const walk = (parent: string | undefined, depth: number) => {
    for (const span of childrenOf(parent)) {
      lines.push(`${'  '.repeat(depth)}${span.name}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines;
}

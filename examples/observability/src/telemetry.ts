import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { NodeSDK, tracing } from '@opentelemetry/sdk-node';

/** What the example's OpenTelemetry set-up gives back. */
export interface Telemetry {
  /** `http://127.0.0.1:<port>/metrics`: the Prometheus text of every metric recorded so far. */
  readonly metricsUrl: string;
  /** Every span that ended, in the order they ended (for the tree the example prints). */
  readonly spans: readonly tracing.ReadableSpan[];
  /**
   * Waits until the console exporter has printed every ended span. A span waits for the resource's
   * asynchronous attributes (host and process detection) before it is exported, so on a busy
   * machine its printout can come after calls that ended sooner.
   */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Keeps ended spans in memory so the example can print them as a tree. */
class SpanCollector implements tracing.SpanProcessor {
  readonly spans: tracing.ReadableSpan[] = [];
  onStart(): void {}
  onEnd(span: tracing.ReadableSpan): void {
    this.spans.push(span);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The OpenTelemetry Node SDK as a service would start it, before any infergate client exists:
 * spans to the console, metrics to a Prometheus endpoint. `service.name` is the service's own
 * resource attribute (a library never sets it).
 */
export async function startTelemetry(serviceName: string): Promise<Telemetry> {
  // Only what is configured here: no OTLP log exporter looking for a collector on localhost.
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const prometheus = new PrometheusExporter({ preventServerStart: true });
  const collector = new SpanCollector();
  const printed = new tracing.SimpleSpanProcessor(new tracing.ConsoleSpanExporter());
  const sdk = new NodeSDK({
    serviceName,
    spanProcessors: [printed, collector],
    metricReaders: [prometheus],
  });
  sdk.start();
  // Our own listener on 127.0.0.1 and a free port, serving the exporter's handler at /metrics.
  const server: Server = createServer((request, response) => {
    if (request.url === '/metrics') prometheus.getMetricsRequestHandler(request, response);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    metricsUrl: `http://127.0.0.1:${port}/metrics`,
    spans: collector.spans,
    flush: () => printed.forceFlush(),
    async shutdown() {
      await new Promise((resolve) => server.close(resolve));
      await sdk.shutdown();
    },
  };
}

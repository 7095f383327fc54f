// Live progress: a redrawn bar on a TTY, plain periodic lines otherwise (CI logs, pipes, tests).
import { clip, int, ms } from './format.js';
import type { DemoEvent, TimePoint } from './metrics.js';

export interface LiveStatus {
  point: TimePoint;
  /** Router fallbacks so far (Triton + chat). */
  fallbacks: number;
  /** Targets whose breaker is not closed, with the state. */
  breakers: string[];
}

export interface Progress {
  update(status: LiveStatus): void;
  event(event: DemoEvent): void;
  done(): void;
}

const WIDTH = 79;
const MARK: Record<DemoEvent['kind'], string> = {
  fault: '✗',
  recover: '✓',
  breaker: '⚡',
  budget: '$',
  info: '·',
};

/** "3,830 items/s  batch 64  p99 124 ms  fallbacks 2,103", then open breakers if they fit. */
function figures(status: LiveStatus, room: number): string {
  const { point } = status;
  const items = Object.values(point.itemsPerS).reduce((a, b) => a + b, 0);
  let rows = 0;
  let batches = 0;
  for (const [endpoint, count] of Object.entries(point.batches)) {
    batches += count;
    rows += (point.batchSize[endpoint] ?? 0) * count;
  }
  const batch = batches === 0 ? '–' : String(Math.round(rows / batches));
  const text = `${int(items)} items/s  batch ${batch}  p99 ${ms(point.p99Ms)} ms  fallbacks ${int(status.fallbacks)}`;
  const breakers = status.breakers.length === 0 ? '' : `  ${status.breakers.join(' ')}`;
  return text.length + breakers.length <= room ? text + breakers : text;
}

export function formatEvent(event: DemoEvent): string {
  return clip(`  ${event.t.toFixed(1).padStart(5)}s  ${MARK[event.kind]} ${event.text}`, WIDTH);
}

export function createProgress(out: NodeJS.WriteStream, durationS: number): Progress {
  if (out.isTTY === true) {
    let last = '';
    const draw = () => out.write(`\r\x1b[K${last}`);
    return {
      update(status) {
        const share = Math.min(1, status.point.t / durationS);
        const filled = Math.round(share * 12);
        const head = `  ${'█'.repeat(filled)}${'░'.repeat(12 - filled)} ${status.point.t.toFixed(1).padStart(4)}s  `;
        last = clip(head + figures(status, WIDTH - head.length), WIDTH);
        draw();
      },
      event(event) {
        out.write(`\r\x1b[K${formatEvent(event)}\n`);
        draw();
      },
      done() {
        out.write('\r\x1b[K');
      },
    };
  }
  // Not a terminal: one line per second (every 5 s on long runs).
  const every = durationS > 30 ? 5 : 1;
  let next = every;
  return {
    update(status) {
      if (status.point.t + 1e-3 < next) return;
      next += every;
      const head = `  ${status.point.t.toFixed(1).padStart(5)}s  `;
      out.write(`${clip(head + figures(status, WIDTH - head.length), WIDTH)}\n`);
    },
    event(event) {
      out.write(`${formatEvent(event)}\n`);
    },
    done() {},
  };
}

import { performance } from 'node:perf_hooks';
import { sleep } from '@infergate/core';

/** One request; resolves when its response is in. A rejection counts as an error, not a latency. */
export type PerfCall = () => Promise<unknown>;

/** What one measurement window saw. */
export interface WindowSample {
  /** Latencies (ms) of the calls that succeeded: from the send (closed loop) or from the scheduled send time (rate mode). */
  latencies: number[];
  completed: number;
  errors: number;
  /** Rate mode: sends skipped because `maxOutstanding` calls were already waiting. */
  skipped: number;
  /** From the first send to the last response, ms. */
  elapsedMs: number;
  /** Client CPU (user + system) the process spent in the window, ms. */
  cpuMs: number;
  /** The first error's message, to tell the user why calls failed. */
  firstError?: string;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Closed loop: `concurrency` workers each send, wait for the response, and send again until
 * `windowMs` has passed; calls in flight at the end are awaited and counted.
 */
export async function closedLoopWindow(
  call: PerfCall,
  concurrency: number,
  windowMs: number,
  signal?: AbortSignal,
): Promise<WindowSample> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const end = started + windowMs;
  const worker = async () => {
    while (performance.now() < end && !signal?.aborted) {
      const sent = performance.now();
      try {
        await call();
        latencies.push(performance.now() - sent);
      } catch (error) {
        errors++;
        firstError ??= errorMessage(error);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return {
    latencies,
    completed: latencies.length,
    errors,
    skipped: 0,
    elapsedMs,
    cpuMs: (used.user + used.system) / 1000,
    ...(firstError !== undefined ? { firstError } : {}),
  };
}

export type RateDistribution = 'constant' | 'poisson';

/**
 * Open loop at `rate` requests per second: send times are fixed in advance (evenly spaced, or
 * exponential gaps for Poisson) and each latency runs from the scheduled time, so a slow server
 * cannot hide its queueing by delaying the sender (no coordinated omission). At most
 * `maxOutstanding` calls wait at once; a send beyond that is skipped and counted.
 */
export async function rateWindow(
  call: PerfCall,
  rate: number,
  distribution: RateDistribution,
  windowMs: number,
  maxOutstanding: number,
  signal?: AbortSignal,
  random: () => number = Math.random,
): Promise<WindowSample> {
  const latencies: number[] = [];
  let errors = 0;
  let skipped = 0;
  let firstError: string | undefined;
  const pending = new Set<Promise<void>>();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const end = started + windowMs;
  const gapMs = () => (distribution === 'constant' ? 1000 / rate : (-Math.log(1 - random()) * 1000) / rate);
  let scheduled = started;
  let sentWithoutWaiting = 0;
  while (scheduled < end && !signal?.aborted) {
    const wait = scheduled - performance.now();
    // Timers fire in whole milliseconds at best: sends due within 1 ms go now, latency still counts from `scheduled`.
    if (wait >= 1) {
      sentWithoutWaiting = 0;
      await sleep(Math.floor(wait), signal).catch(() => undefined);
    } else if (++sentWithoutWaiting % 64 === 0) {
      // Behind schedule (a rate above what this process can send): let responses in now and then.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (signal?.aborted) break;
    if (pending.size >= maxOutstanding) skipped++;
    else {
      const due = scheduled;
      const done: Promise<void> = call().then(
        () => {
          latencies.push(performance.now() - due);
        },
        (error: unknown) => {
          errors++;
          firstError ??= errorMessage(error);
        },
      );
      const tracked = done.finally(() => pending.delete(tracked));
      pending.add(tracked);
    }
    scheduled += gapMs();
  }
  await Promise.all(pending);
  const elapsedMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return {
    latencies,
    completed: latencies.length,
    errors,
    skipped,
    elapsedMs,
    cpuMs: (used.user + used.system) / 1000,
    ...(firstError !== undefined ? { firstError } : {}),
  };
}

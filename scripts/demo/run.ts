// The demo from start to end: set up, drive the load with faults, print the summary, write the report.
import { relative } from 'node:path';
import type { DemoArgs } from './args.js';
import { type DemoEnvironment, startEnvironment } from './environment.js';
import { scheduleFaults } from './faults.js';
import { usd } from './format.js';
import { writeReport } from './html-report.js';
import { type BatchCounters, type DemoEvent, Recorder } from './metrics.js';
import { createProgress } from './progress.js';
import { renderSummary, summarize } from './summary.js';
import { TENANTS } from './tenants.js';
import { runWorkload } from './workload.js';

const TICK_MS = 250;

function counters(env: DemoEnvironment): Map<string, BatchCounters> {
  return new Map(
    env.endpoints.map((target) => {
      const stats = target.batcher.stats();
      return [target.name, { batches: stats.batches, rows: stats.rows, queued: stats.queued }];
    }),
  );
}

function notClosed(env: DemoEnvironment): string[] {
  const states = { ...env.router.breakerStates(), ...env.chat.breakerStates() };
  return Object.entries(states)
    .filter(([, state]) => state.kind !== 'closed')
    .map(([target, state]) => `${target} ${state.kind}`);
}

/** Runs the whole demo; the returned path is the HTML report's. */
export async function runDemo(args: DemoArgs, out: NodeJS.WriteStream = process.stdout): Promise<string> {
  const print = (line = '') => out.write(`${line}\n`);
  const startedAt = new Date();
  print();
  print(
    `infergate demo — ${args.durationS} s, ${TENANTS.length} tenants, ${
      args.url === undefined ? 'embedded reference servers' : `Triton at ${args.url}`
    }`,
  );
  const env = await startEnvironment(args);
  try {
    print();
    for (const line of env.setup) print(`  ${line}`);
    for (const tenant of TENANTS) print(`  tenant  ${tenant.name.padEnd(8)} ${tenant.description}`);
    print();

    const recorder = new Recorder(TENANTS.map((tenant) => tenant.name));
    const progress = createProgress(out, args.durationS);
    const show = (event: DemoEvent) => progress.event(event);
    env.router.on('fallback', () => recorder.fallback('triton'));
    env.chat.on('fallback', () => recorder.fallback('chat'));
    for (const router of [env.router, env.chat]) {
      router.on('breaker-state', ({ target, from, to }) => {
        const tripped = recorder.breaker(target, from.kind, to.kind);
        // Half-open moments are in the report's breaker chart; the terminal shows trips and recoveries.
        if (tripped) show(recorder.event('breaker', `breaker ${target} opened (trip ${to.trips})`));
        else if (to.kind === 'closed') show(recorder.event('breaker', `breaker ${target} closed again`));
      });
    }
    const overSoftLimit = new Set<string>();
    env.costs.on('budget-soft-limit', (event) => {
      // Reported once per tenant (a rolling window would report it again as buckets move on).
      if (overSoftLimit.has(event.line)) return;
      overSoftLimit.add(event.line);
      show(
        recorder.event(
          'budget',
          `${event.attribution.tenant ?? '-'} hit its ${usd(event.limitUsd)}/min soft budget (an alert; calls go on)`,
        ),
      );
    });

    const faults = scheduleFaults(env.faults, args.durationS, recorder, show);
    const tick = () => {
      const point = recorder.tick(counters(env));
      progress.update({
        point,
        fallbacks: recorder.fallbacks.triton + recorder.fallbacks.chat,
        breakers: notClosed(env),
      });
    };
    const ticker = setInterval(tick, TICK_MS);
    try {
      await runWorkload({ env, tenants: TENANTS, recorder, durationS: args.durationS, seed: args.seed });
    } finally {
      clearInterval(ticker);
      await faults.finish();
    }
    // No closing tick: the calls that finish while draining are in the totals, not in the timeline.
    recorder.finish();
    progress.done();

    const report = await env.costs.report({ groupBy: ['tenant', 'model', 'provider'] });
    const summary = summarize({
      env,
      tenants: TENANTS,
      recorder,
      report,
      durationS: args.durationS,
      startedAt,
    });
    for (const line of renderSummary(summary)) print(line);
    const path = await writeReport(args.reportDir, summary, recorder);
    const shown = relative(process.cwd(), path);
    print();
    print(`HTML report: ${shown.startsWith('..') ? path : shown}`);
    print();
    return path;
  } finally {
    await env.close();
  }
}

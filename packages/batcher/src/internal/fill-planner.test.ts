import { describe, expect, it } from 'vitest';
import { FillPlanner } from './fill-planner.js';

/** A planner that has measured three 4 ms batches of `rows` rows, each answered at t = 0, 10, 20. */
function warmed(rows: number, options: { cap?: number; delay?: number; returned?: number } = {}) {
  const planner = new FillPlanner(options.cap ?? 64, options.delay ?? 10, undefined, 'fill');
  for (const at of [0, 10, 20]) {
    planner.sent(rows);
    planner.answered(at, rows, 4);
    // The answered callers (or `returned` of them) send again 0.1 ms later.
    planner.arrived(at + 0.1, options.returned ?? rows);
  }
  return planner;
}

describe('fill planner (adaptive policy arithmetic)', () => {
  it('sends a lone call at once when nothing is expected back', () => {
    const planner = new FillPlanner(64, 10, undefined, 'fill');
    expect(planner.hold(0, 1, 0, 0)).toBeUndefined();
    expect(planner.serviceMs).toBe(0);
  });

  it('learns the service time and that closed-loop callers come back', () => {
    const planner = warmed(8);
    expect(planner.serviceMs).toBe(4);
    // Two windows closed (the third is open): every answered row came back.
    expect(planner.returnShare).toBe(1);
  });

  it('learns how much the round trip varies (mean deviation) for admission', () => {
    expect(warmed(8).serviceDevMs).toBe(0);
    expect(warmed(8).serviceHighMs).toBe(4);
    const planner = new FillPlanner(64, 10, undefined, 'fill');
    for (const [at, ms] of [2, 6, 2].entries()) planner.answered(at * 10, 8, ms);
    expect(planner.serviceMs).toBeCloseTo(2.64, 9);
    expect(planner.serviceDevMs).toBeCloseTo(0.95, 9);
    expect(planner.serviceHighMs).toBeCloseTo(2.64 + 4 * 0.95, 9);
  });

  it("keeps the round trips' tail (99th percentile of the last 256) after the deviation has forgotten it", () => {
    const planner = new FillPlanner(64, 10, undefined, 'fill');
    // 256 round trips of 4 ms, one in 64 of them 20 ms (a descheduled process, a GC pause), then 16 of 4 ms.
    for (let index = 0; index < 272; index++)
      planner.answered(index * 10, 8, index < 256 && index % 64 === 0 ? 20 : 4);
    // Three 20 ms round trips are in the last 256: the 3rd longest is 20 ms.
    expect(planner.serviceTailMs).toBe(20);
    expect(planner.serviceHighMs).toBe(20);
    // Sixteen steady batches after the last slow one, the mean and its deviation alone say far less.
    expect(planner.serviceMs + 4 * planner.serviceDevMs).toBeLessThan(6);
    // Another 256 steady round trips push the slow ones out: back to the mean plus its deviations.
    for (let index = 272; index < 528; index++) planner.answered(index * 10, 8, 4);
    expect(planner.serviceTailMs).toBe(4);
    expect(planner.serviceHighMs).toBeCloseTo(planner.serviceMs + 4 * planner.serviceDevMs, 9);
  });

  it('counts slow round trips rarer than one in twenty: the 99th percentile, not the 95th', () => {
    const planner = new FillPlanner(64, 10, undefined, 'fill');
    // Four slow round trips among 256 (1.6 %): under the 95th percentile, over the 99th. The last
    // 72 are all steady, so a shorter window of the last 64 would not see them either.
    for (let index = 0; index < 256; index++)
      planner.answered(index * 10, 8, index < 184 && index % 46 === 0 ? 16 : 4);
    expect(planner.serviceTailMs).toBe(16);
    expect(planner.serviceHighMs).toBe(16);
  });

  it('takes the k-th longest of fewer round trips as its tail while it has fewer than 256', () => {
    const planner = new FillPlanner(64, 10, undefined, 'fill');
    expect(planner.serviceTailMs).toBe(0);
    for (const [at, ms] of [3, 9, 5].entries()) planner.answered(at * 10, 8, ms);
    // Three round trips: 1 % of them rounds up to one, the longest.
    expect(planner.serviceTailMs).toBe(9);
    // 101 round trips: 1 % is 1.01, so the 2nd longest.
    for (let index = 3; index < 101; index++) planner.answered(index * 10, 8, index === 10 ? 7 : 4);
    expect(planner.serviceTailMs).toBe(7);
  });

  it('holds a partial batch for the rows an answered batch brings back, up to one service time', () => {
    const planner = warmed(8);
    planner.sent(8);
    planner.answered(100, 8, 4);
    planner.arrived(100.2, 3);
    expect(planner.expectedRows(100.2)).toBe(5);
    // 3 of 8 queued, 5 expected. Callers are coming back: decide again at the end of this turn (`now`), then wait, at most
    // until the window (one service time) closes.
    expect(planner.hold(100.2, 3, 100.2, 0)).toBe(100.2);
    expect(planner.hold(100.2, 3, 100.2, 0, true)).toBe(104);
    planner.arrived(100.4, 5);
    expect(planner.expectedRows(100.4)).toBe(0);
    expect(planner.hold(100.4, 8, 100.2, 0)).toBeUndefined();
  });

  it('keeps one window per answered batch, so two batches answered together are both waited for', () => {
    const planner = warmed(8);
    planner.answered(100, 8, 4);
    planner.arrived(100.1, 1);
    planner.arrived(100.1, 1);
    planner.arrived(100.1, 1);
    planner.answered(100.5, 8, 4);
    expect(planner.expectedRows(100.5)).toBe(5 + 8);
    // Arrivals count against the older window first.
    for (let call = 0; call < 6; call++) planner.arrived(100.6, 1);
    expect(planner.expectedRows(100.6)).toBe(7);
    expect(planner.hold(100.6, 9, 100.1, 0, true)).toBe(104.5);
    // The older window closes at 104 with all its rows back; the newer one is still counted.
    expect(planner.expectedRows(104.2)).toBe(7);
    expect(planner.expectedRows(104.6)).toBe(0);
  });

  it('counts an expected row from 0.8 of one: no wait for a likely-absent caller, none left behind', () => {
    const partial = warmed(10, { returned: 7 });
    expect(partial.returnShare).toBeCloseTo(0.7);
    partial.answered(100, 1, 4);
    expect(partial.expectedRows(100)).toBe(0);
    const full = warmed(63, { returned: 63 });
    full.answered(100, 63, 4);
    full.arrived(100.1, 62);
    expect(full.expectedRows(100.1)).toBe(1);
  });

  it("never holds past the oldest call's maxQueueDelayMs", () => {
    const planner = warmed(8, { delay: 2 });
    planner.answered(100, 8, 4);
    planner.arrived(100.1, 1);
    // The window is min(service 4 ms, delay 2 ms); the oldest call was queued at 99.
    expect(planner.hold(100.1, 1, 99, 0, true)).toBe(101);
    expect(planner.hold(101, 1, 99, 0)).toBeUndefined();
  });

  it("with a share under 1, decides at the end of the turn while an answered batch's callers come back", () => {
    const planner = warmed(8);
    // A pause: the next window brings nobody back, and the share drops to 0.8.
    planner.answered(120, 8, 4);
    planner.arrived(130, 0);
    expect(planner.returnShare).toBeCloseTo(0.8, 9);
    planner.answered(140, 8, 4);
    planner.arrived(140.1, 6);
    // 0.8 × 8 rounded up from 0.8 of a row is 6: that many have come back, two of 8 have not.
    expect(planner.expectedRows(140.1)).toBe(0);
    expect(planner.hold(140.1, 6, 140.1, 0)).toBe(140.1);
    // The end-of-turn decision sends; so does one with every row back.
    expect(planner.hold(140.1, 6, 140.1, 0, true)).toBeUndefined();
    planner.arrived(140.1, 2);
    expect(planner.hold(140.1, 8, 140.1, 0)).toBeUndefined();
  });

  it('does not wait for callers that do not come back (open-loop arrivals)', () => {
    const planner = warmed(8, { returned: 0 });
    planner.answered(100, 8, 4);
    planner.arrived(100.1, 1);
    expect(planner.returnShare).toBe(0);
    expect(planner.hold(100.1, 1, 100.1, 0)).toBeUndefined();
  });

  it('a full batch always goes; a further slot takes a partial one only after maxQueueDelayMs', () => {
    const planner = warmed(8, { cap: 8 });
    planner.answered(100, 8, 4);
    expect(planner.hold(100.1, 8, 100, 0)).toBeUndefined();
    // One batch in flight: a partial batch waits for it, bounded by the oldest call's delay.
    expect(planner.hold(100.1, 3, 100, 1)).toBe(110);
    expect(planner.hold(110, 3, 100, 1)).toBeUndefined();
    expect(planner.hold(100.1, 8, 100, 1)).toBeUndefined();
  });

  it("lowers the target to the server's preferred batch size", () => {
    const planner = new FillPlanner(64, 10, { maxQueueDelayUs: 0, preferredBatchSizes: [4, 16] }, 'fill');
    for (const at of [0, 10, 20]) {
      planner.answered(at, 8, 4);
      planner.arrived(at + 0.1, 8);
    }
    planner.answered(100, 8, 4);
    planner.arrived(100.1, 4);
    // 4 queued + 4 expected = 8, preferred sizes 4 and 16: 4 is enough.
    expect(planner.hold(100.1, 4, 100.1, 0)).toBeUndefined();
    expect(planner.hold(100.1, 3, 100.1, 0)).toBe(104);
  });

  it('eager mode never holds', () => {
    const planner = new FillPlanner(64, 10, { maxQueueDelayUs: 100, preferredBatchSizes: [] }, 'eager');
    for (const at of [0, 10, 20, 30]) {
      planner.answered(at, 8, 4);
      planner.arrived(at + 0.1, 8);
    }
    expect(planner.hold(30.1, 1, 30.1, 0)).toBeUndefined();
    expect(planner.hold(30.1, 1, 30.1, 1)).toBeUndefined();
  });

  it('measure rule: fills once the server queue exceeds its own delay, back to eager when batches shrink', () => {
    const server = { maxQueueDelayUs: 100, preferredBatchSizes: [] };
    const planner = new FillPlanner(64, 10, server, 'eager');
    // 1,000 requests, each run alone, waited 150 µs; executions take 1,000 µs: 150 <= 100 + 250.
    planner.serverSample({ requests: 1000, executions: 1000, queueUs: 150_000, computeUs: 1_000_000 });
    expect(planner.verdict).toBe('idle');
    expect(planner.mode).toBe('eager');
    // They waited 800 µs each, behind other executions: the server is saturated, fill.
    planner.serverSample({ requests: 1000, executions: 1000, queueUs: 800_000, computeUs: 1_000_000 });
    expect(planner.verdict).toBe('saturated');
    expect(planner.mode).toBe('fill');
    // Filling, the server queue empties, but batches still carry 32 rows: stay.
    for (let batch = 0; batch < 10; batch++) planner.sent(32);
    planner.serverSample({ requests: 10, executions: 10, queueUs: 1_000, computeUs: 10_000 });
    expect(planner.verdict).toBe('idle');
    expect(planner.mode).toBe('fill');
    // Load gone: batches of one. Eager again.
    for (let batch = 0; batch < 10; batch++) planner.sent(1);
    planner.serverSample({ requests: 10, executions: 10, queueUs: 1_000, computeUs: 10_000 });
    expect(planner.mode).toBe('eager');
  });

  it('measure rule: a server that merges our requests into one execution means fill', () => {
    const planner = new FillPlanner(64, 10, { maxQueueDelayUs: 100, preferredBatchSizes: [] }, 'eager');
    // Two requests per execution, hardly any queueing beyond the delay: Triton merged what we split.
    planner.serverSample({ requests: 1000, executions: 500, queueUs: 150_000, computeUs: 3_000_000 });
    expect(planner.verdict).toBe('saturated');
    expect(planner.mode).toBe('fill');
  });

  it('measure rule: an interval without requests changes nothing', () => {
    const planner = new FillPlanner(64, 10, { maxQueueDelayUs: 100, preferredBatchSizes: [] }, 'fill');
    planner.serverSample({ requests: 0, executions: 0, queueUs: 0, computeUs: 0 });
    expect(planner.mode).toBe('fill');
    expect(planner.verdict).toBe('unknown');
  });
});

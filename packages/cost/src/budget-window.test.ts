import { describe, expect, it } from 'vitest';
import { windowAt } from './budget-window.js';

const utc = (text: string) => Date.parse(text);

describe('budget windows', () => {
  it('calendar windows are UTC minute, hour, day and month, keyed by their start', () => {
    const now = utc('2025-02-28T23:59:59.999Z');
    const calendar = (window: 'minute' | 'hour' | 'day' | 'month') =>
      windowAt({ window, kind: 'calendar', rollingBuckets: 60 }, now);
    expect(calendar('minute')).toMatchObject({
      start: utc('2025-02-28T23:59:00Z'),
      resetAt: utc('2025-03-01T00:00:00Z'),
    });
    expect(calendar('hour')).toMatchObject({
      start: utc('2025-02-28T23:00:00Z'),
      resetAt: utc('2025-03-01T00:00:00Z'),
    });
    expect(calendar('day')).toMatchObject({
      start: utc('2025-02-28T00:00:00Z'),
      resetAt: utc('2025-03-01T00:00:00Z'),
    });
    expect(calendar('month')).toMatchObject({
      start: utc('2025-02-01T00:00:00Z'),
      resetAt: utc('2025-03-01T00:00:00Z'),
    });
    expect(calendar('month').buckets).toEqual([utc('2025-02-01T00:00:00Z')]);
    // One millisecond later every window has rolled over.
    const next = windowAt({ window: 'month', kind: 'calendar', rollingBuckets: 60 }, now + 1);
    expect(next.current).toBe(utc('2025-03-01T00:00:00Z'));
    expect(next.resetAt).toBe(utc('2025-04-01T00:00:00Z'));
  });

  it('rolling windows count the current sub-bucket and the N before it', () => {
    const now = utc('2025-01-01T00:10:30.500Z');
    const span = windowAt({ window: 'minute', kind: 'rolling', rollingBuckets: 6 }, now);
    expect(span.current).toBe(utc('2025-01-01T00:10:30Z'));
    expect(span.buckets).toHaveLength(7);
    expect(span.start).toBe(utc('2025-01-01T00:09:30Z'));
    expect(span.resetAt).toBe(utc('2025-01-01T00:10:40Z'));
    // Counted span is between one window and one window plus one bucket.
    expect(now - span.start).toBeGreaterThanOrEqual(60_000);
    expect(now - span.start).toBeLessThan(70_000);
  });
});

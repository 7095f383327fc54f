import { describe, expect, it } from 'vitest';
import { SpendLine } from './spend-line.js';

describe('SpendLine', () => {
  it('sums the buckets asked for, the current one and earlier ones alike', () => {
    const line = new SpendLine();
    line.add(100, 80, 1);
    line.add(100, 80, 2);
    line.add(110, 90, 4);
    line.add(120, 100, 8);
    expect(line.spent([100, 110, 120])).toBe(15);
    expect(line.spent([110, 120])).toBe(12);
    expect(line.spent([130])).toBe(0);
  });

  it('drops buckets no window counts once a later bucket starts', () => {
    const line = new SpendLine();
    line.add(100, 100, 1);
    line.add(110, 110, 2);
    expect(line.spent([100, 110])).toBe(2);
  });

  it('counts spend added to an earlier bucket (a clock behind) where it belongs', () => {
    const line = new SpendLine();
    line.add(100, 90, 1);
    line.add(120, 100, 2);
    line.add(110, 90, 4);
    line.add(110, 90, 8);
    expect(line.spent([110])).toBe(12);
    expect(line.spent([100, 110, 120])).toBe(15);
    // Moving on keeps the earlier buckets a window still counts.
    line.add(130, 100, 16);
    expect(line.spent([100, 110, 120, 130])).toBe(31);
  });
});

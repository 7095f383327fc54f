import { describe, expect, it } from 'vitest';
import { formatUsd } from './format-usd.js';

describe('formatUsd', () => {
  it('shows cents from a dollar up and four significant digits below, without float noise', () => {
    expect(formatUsd(0.00010279999999999999)).toBe('$0.0001028');
    expect(formatUsd(0.1 + 0.2)).toBe('$0.30');
    expect(formatUsd(12.5)).toBe('$12.50');
    expect(formatUsd(1234.567)).toBe('$1234.57');
    expect(formatUsd(0.05)).toBe('$0.05');
    expect(formatUsd(0.0123456)).toBe('$0.01235');
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(-0.5)).toBe('-$0.50');
    expect(formatUsd(1e-12)).toBe('$0.00');
  });
});

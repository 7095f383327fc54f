import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './retry-after.js';

const headers = (values: Record<string, string>) => new Headers(values);
const now = Date.parse('2025-01-01T00:00:00Z');

describe('parseRetryAfter', () => {
  it('reads delta-seconds, decimals included', () => {
    expect(parseRetryAfter(headers({ 'retry-after': '7' }), now)).toBe(7000);
    expect(parseRetryAfter(headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(parseRetryAfter(headers({ 'retry-after': ' 0 ' }), now)).toBe(0);
  });

  it('reads an HTTP date relative to now, and a past date as 0', () => {
    expect(parseRetryAfter(headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }), now)).toBe(30_000);
    expect(parseRetryAfter(headers({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }), now)).toBe(0);
  });

  it('prefers retry-after-ms over retry-after', () => {
    expect(parseRetryAfter(headers({ 'retry-after-ms': '1250.4', 'retry-after': '9' }), now)).toBe(1250);
  });

  it('ignores garbage and absence', () => {
    expect(parseRetryAfter(headers({}), now)).toBeUndefined();
    expect(parseRetryAfter(headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(parseRetryAfter(headers({ 'retry-after': '-3' }), now)).toBeUndefined();
    expect(parseRetryAfter(headers({ 'retry-after-ms': 'x', 'retry-after': '2' }), now)).toBe(2000);
  });
});

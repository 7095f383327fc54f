import { describe, expect, it } from 'vitest';
import { LoadBook } from './load-stats.js';

describe('LoadBook', () => {
  it('keeps figures per target and model while the last model asked for is remembered', () => {
    const book = new LoadBook(1_000);
    const a = book.get('t', 'a');
    const b = book.get('t', 'b');
    expect(b).not.toBe(a);
    // Back and forth: each model keeps its own figures, whichever was asked for last.
    expect(book.get('t', 'a')).toBe(a);
    expect(book.get('t', 'a')).toBe(a);
    expect(book.get('t', 'b')).toBe(b);
    expect(book.get('u', 'a')).not.toBe(a);
    a.record(5, 1);
    expect(book.get('t', 'a').samples).toBe(1);
    expect(book.get('t', 'b').samples).toBe(0);
  });

  it("counts a target's calls in flight over all its models", () => {
    const book = new LoadBook(1_000);
    book.get('t', 'a').start();
    book.get('t', 'b').start();
    book.get('t', 'b').start();
    book.get('u', 'a').start();
    expect(book.inFlight('t')).toBe(3);
    expect(book.inFlight('u')).toBe(1);
    expect(book.inFlight('v')).toBe(0);
    book.get('t', 'b').end();
    expect(book.inFlight('t')).toBe(2);
  });

  it('forgets the oldest model past 1024 per target, and a forgotten model starts afresh', () => {
    const book = new LoadBook(1_000);
    const first = book.get('t', 'm0');
    first.record(5, 1);
    for (let model = 1; model <= 1_024; model++) book.get('t', `m${model}`);
    const again = book.get('t', 'm0');
    expect(again).not.toBe(first);
    expect(again.samples).toBe(0);
  });
});

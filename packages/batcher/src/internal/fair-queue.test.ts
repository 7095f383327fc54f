import { describe, expect, it } from 'vitest';
import { FairQueue } from './fair-queue.js';

interface Item {
  tenant: string;
  rows: number;
  enqueuedAt: number;
  id: string;
}

function fill(queue: FairQueue<Item>, tenant: string, count: number, rows = 1): Item[] {
  return Array.from({ length: count }, (_, index) => {
    const item = { tenant, rows, enqueuedAt: index, id: `${tenant}${index}` };
    queue.push(item);
    return item;
  });
}

describe('FairQueue (deficit round robin in rows)', () => {
  it('shares a batch evenly between a flooding tenant and a small one', () => {
    const queue = new FairQueue<Item>(() => 1);
    fill(queue, 'a', 500);
    fill(queue, 'b', 20);
    const batch = queue.take(64);
    expect(batch.filter((item) => item.tenant === 'b')).toHaveLength(20);
    expect(batch).toHaveLength(64);
    expect(queue.size).toBe(456);
  });

  it('divides rows by weight', () => {
    const queue = new FairQueue<Item>((tenant) => (tenant === 'a' ? 3 : 1));
    fill(queue, 'a', 100);
    fill(queue, 'b', 100);
    const batch = queue.take(64);
    expect(batch.filter((item) => item.tenant === 'a')).toHaveLength(48);
  });

  it('returns an item larger than the batch alone, and skips items that do not fit', () => {
    const queue = new FairQueue<Item>(() => 1);
    fill(queue, 'a', 1, 10);
    fill(queue, 'b', 3, 3);
    expect(queue.take(4).map((item) => item.id)).toEqual(['a0']);
    expect(queue.take(4).map((item) => item.id)).toEqual(['b0']);
    expect(queue.rows).toBe(6);
  });

  it('removes a queued item and reports the oldest', () => {
    const queue = new FairQueue<Item>(() => 1);
    const [first] = fill(queue, 'a', 2);
    fill(queue, 'b', 1);
    expect(queue.remove(first as Item)).toBe(true);
    expect(queue.remove(first as Item)).toBe(false);
    expect(queue.oldest()?.id).toBe('b0');
    expect(queue.drain()).toHaveLength(2);
    expect(queue.size).toBe(0);
  });
});

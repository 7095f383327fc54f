import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SystemSharedMemoryRegion } from './system-shared-memory.js';

describe('SystemSharedMemoryRegion', () => {
  it('creates a file under /dev/shm of the asked size, writes and reads at offsets, and removes it', () => {
    const region = SystemSharedMemoryRegion.create({ byteSize: 4096 });
    try {
      expect(region.key).toMatch(/^\/infergate_\d+_[0-9a-f]+$/);
      expect(region.path).toBe(`/dev/shm${region.key}`);
      expect(readFileSync(region.path).byteLength).toBe(4096);
      region.write(Buffer.from('hello'), 100);
      expect(region.read(100, 5).toString()).toBe('hello');
      expect(readFileSync(region.path).subarray(100, 105).toString()).toBe('hello');
    } finally {
      region.destroy();
    }
    expect(existsSync(region.path)).toBe(false);
    expect(region.closed).toBe(true);
    expect(() => region.read(0, 1)).toThrow(/closed/);
  });

  it('rejects out-of-range access and bad keys or sizes', () => {
    const region = SystemSharedMemoryRegion.create({ byteSize: 16, key: `/infergate_test_${process.pid}` });
    try {
      expect(region.key).toBe(`/infergate_test_${process.pid}`);
      expect(() => region.write(new Uint8Array(8), 12)).toThrow(
        expect.objectContaining({ code: 'OUT_OF_RANGE' }),
      );
      expect(() => region.read(-1, 2)).toThrow(expect.objectContaining({ code: 'OUT_OF_RANGE' }));
    } finally {
      region.destroy();
    }
    expect(() => SystemSharedMemoryRegion.create({ byteSize: 0 })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => SystemSharedMemoryRegion.create({ byteSize: 8, key: '../etc' })).toThrow(/may hold only/);
  });
});

import { randomBytes } from 'node:crypto';
import {
  closeSync,
  ftruncateSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { buildInferResponse } from './infer-response.js';
import type { ExecuteRequest } from './model-definition.js';
import { RpcError } from './rpc-error.js';
import { REGION_COPY_LIMIT, SharedMemoryRegistry, shmPath } from './shared-memory.js';

const created: string[] = [];

function region(bytes: Uint8Array): string {
  const key = `/infergate_registry_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  writeFileSync(shmPath(key), bytes);
  created.push(shmPath(key));
  return key;
}

afterEach(() => {
  for (const path of created.splice(0)) unlinkSync(path);
});

describe('SharedMemoryRegistry', () => {
  it('reads what the region holds at each call, not what it held at the first', () => {
    const key = region(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
    const registry = new SharedMemoryRegistry();
    registry.register('in', key, 2, 6);
    expect([...registry.read({ region: 'in', offset: 1, byteSize: 3 })]).toEqual([4, 5, 6]);
    writeFileSync(shmPath(key), new Uint8Array([9, 9, 9, 9, 9, 9, 9, 9]));
    expect([...registry.read({ region: 'in', offset: 1, byteSize: 3 })]).toEqual([9, 9, 9]);
    registry.unregister();
  });

  it('reads bytes the file no longer has (truncated by its owner) as zeros', () => {
    const key = region(new Uint8Array(8).fill(7));
    const registry = new SharedMemoryRegistry();
    registry.register('in', key, 0, 8);
    registry.read({ region: 'in', offset: 0, byteSize: 8 });
    const fd = openSync(shmPath(key), 'r+');
    ftruncateSync(fd, 4);
    closeSync(fd);
    expect([...registry.read({ region: 'in', offset: 0, byteSize: 8 })]).toEqual([7, 7, 7, 7, 0, 0, 0, 0]);
    registry.unregister();
  });

  it('says which bytes lie in a region copy, until the region is unregistered', () => {
    const key = region(new Uint8Array(16).fill(1));
    const registry = new SharedMemoryRegistry();
    registry.register('in', key, 0, 16);
    const read = registry.read({ region: 'in', offset: 4, byteSize: 8 });
    expect(registry.holds(read)).toBe(true);
    expect(registry.holds(read.subarray(2))).toBe(true);
    expect(registry.holds(new Uint8Array(read))).toBe(false);
    registry.unregister('in');
    expect(registry.holds(read)).toBe(false);
  });

  it('reads a region larger than the copy limit into memory of its own', () => {
    const key = region(new Uint8Array(0));
    const fd = openSync(shmPath(key), 'r+');
    const big = REGION_COPY_LIMIT + 4096; // sparse: tmpfs stores none of it
    ftruncateSync(fd, big);
    writeSync(fd, new Uint8Array([1, 2, 3]), 0, 3, big - 3);
    closeSync(fd);
    const registry = new SharedMemoryRegistry();
    registry.register('huge', key, 0, big);
    const read = registry.read({ region: 'huge', offset: big - 3, byteSize: 3 });
    expect([...read]).toEqual([1, 2, 3]);
    expect(registry.holds(read)).toBe(false);
    registry.unregister();
  });

  it('writes an output at its offset and refuses one larger than the binding', () => {
    const key = region(new Uint8Array(8));
    const registry = new SharedMemoryRegistry();
    registry.register('out', key, 4, 4);
    registry.write({ region: 'out', offset: 1, byteSize: 3 }, 'OUTPUT0', new Uint8Array([5, 6, 7]));
    expect([...readFileSync(shmPath(key))]).toEqual([0, 0, 0, 0, 0, 5, 6, 7]);
    expect(() =>
      registry.write({ region: 'out', offset: 0, byteSize: 2 }, 'OUTPUT0', new Uint8Array(3)),
    ).toThrow(RpcError);
    registry.unregister();
  });

  it('copies an input echoed into the response, so a later read of the region cannot change it', () => {
    const key = region(new Uint8Array(8).fill(3));
    const registry = new SharedMemoryRegistry();
    registry.register('in', key, 0, 8);
    const raw = registry.read({ region: 'in', offset: 0, byteSize: 8 });
    const request = {
      model: 'identity',
      version: '1',
      id: '',
      requestedOutputs: ['OUTPUT0'],
      outputsNamed: false,
    } as unknown as ExecuteRequest;
    const response = buildInferResponse(request, [{ name: 'OUTPUT0', datatype: 'UINT8', shape: [8], raw }], {
      shm: registry,
    });
    writeFileSync(shmPath(key), new Uint8Array(8).fill(4));
    registry.read({ region: 'in', offset: 0, byteSize: 8 });
    expect([...(response.rawOutputContents[0] as Uint8Array)]).toEqual(new Array(8).fill(3));
    registry.unregister();
  });
});

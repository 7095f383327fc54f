import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { CallRecorder } from './call-recorder.js';
import type { ExecuteRequest } from './model-definition.js';
import { simulatedGpuModel } from './models/simulated-gpu-model.js';
import { SimulatedGpu, type SimulatedGpuStats } from './simulated-gpu.js';

describe('SimulatedGpu', () => {
  it('runs executions one at a time, in arrival order', async () => {
    const gpu = new SimulatedGpu({ baseMs: 3, perRowMs: 0 });
    const order: number[] = [];
    await Promise.all([1, 2, 3, 4].map((rows) => gpu.run(rows).then(() => order.push(rows))));
    expect(order).toEqual([1, 2, 3, 4]);
    expect(gpu.stats()).toMatchObject({
      executions: 4,
      rows: 10,
      maxBatchSize: 4,
      maxConcurrent: 1,
      queued: 0,
    });
  });

  it("hands an ended execution's answer on before the next execution's start runs", async () => {
    const gpu = new SimulatedGpu({ baseMs: 2, perRowMs: 0 });
    const order: string[] = [];
    const run = (name: string) =>
      gpu.run(1, undefined, () => order.push(`start ${name}`)).then(() => order.push(`end ${name}`));
    const third: Promise<unknown>[] = [];
    await Promise.all([
      run('a').then(() => {
        // Arrives while the slot passes from a to b: it queues behind b, it does not take the slot.
        third.push(run('c'));
      }),
      run('b'),
    ]);
    await Promise.all(third);
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(gpu.stats()).toMatchObject({ executions: 3, maxConcurrent: 1, queued: 0 });
    // The next execution's clock starts when the slot passes, not when its start is run.
    expect(gpu.stats().minOverrunMs).toBeGreaterThanOrEqual(0);
  });

  it("tells a queued execution's start the instant the slot passed to it", async () => {
    const gpu = new SimulatedGpu({ baseMs: 2, perRowMs: 0 });
    const starts: { name: string; at: bigint | undefined }[] = [];
    const run = (name: string) => gpu.run(1, undefined, (at) => starts.push({ name, at }));
    await Promise.all([run('free slot'), run('queued')]);
    // The free slot's start runs when it starts (no instant given: now); the queued one's runs
    // after its predecessor's answer, and is told when the slot passed.
    expect(starts.map((start) => [start.name, typeof start.at])).toEqual([
      ['free slot', 'undefined'],
      ['queued', 'bigint'],
    ]);
  });

  it('charges baseMs + perRowMs per row', () => {
    const gpu = new SimulatedGpu({ baseMs: 2, perRowMs: 0.5 });
    expect(gpu.costMs(10)).toBe(7);
    expect(new SimulatedGpu().costMs(64)).toBeCloseTo(5.2);
  });

  it('answers a share of executions late, outside the slot', async () => {
    let draw = 0;
    // The first execution draws under the probability, the second over it.
    const gpu = new SimulatedGpu({
      baseMs: 1,
      perRowMs: 0,
      tailProbability: 0.5,
      tailMs: 60_000,
      random: () => (draw++ === 0 ? 0.1 : 0.9),
    });
    const controller = new AbortController();
    const late = gpu.run(1, controller.signal);
    // The late answer does not hold the slot: the second execution runs and answers meanwhile.
    await gpu.run(1);
    expect(gpu.stats()).toMatchObject({ executions: 2, tailDelays: 1, maxConcurrent: 1 });
    controller.abort();
    await expect(late).rejects.toMatchObject({ code: 1 });
  });

  it('never ends an execution before its cost, whatever the phase of the millisecond clock', async () => {
    const gpu = new SimulatedGpu({ baseMs: 3.9, perRowMs: 0 });
    for (let i = 0; i < 8; i++) {
      // Node's timers count whole milliseconds from a floored clock, so a plain 3.9 ms timer set
      // late in a millisecond fires after 3 ms and a bit. Starting at varied points of the
      // millisecond makes that happen here unless the execution checks the precise clock.
      const until = performance.now() + ((i * 0.37) % 1);
      while (performance.now() < until) {}
      await gpu.run(1);
    }
    const stats = gpu.stats();
    expect(stats.executions).toBe(8);
    expect(stats.busyMs).toBeCloseTo(8 * 3.9);
    expect(stats.minOverrunMs).toBeGreaterThanOrEqual(0);
    expect(stats.maxOverrunMs).toBeGreaterThanOrEqual(stats.minOverrunMs);
    expect(stats.wallMs).toBeGreaterThanOrEqual(stats.busyMs);
    gpu.resetStats();
    expect(gpu.stats()).toMatchObject({ executions: 0, wallMs: 0, minOverrunMs: 0, maxOverrunMs: 0 });
  });

  it('rejects a tail probability outside [0, 1]', () => {
    expect(() => new SimulatedGpu({ tailProbability: 1.5 })).toThrow(RangeError);
  });

  it("computes simulated_gpu's output while the execution holds the slot, and answers at its end", async () => {
    const gpu = new SimulatedGpu({ baseMs: 20, perRowMs: 0 });
    const model = simulatedGpuModel(gpu, 8);
    // The GPU's counters at the moment the model reads its input.
    const seen: SimulatedGpuStats[] = [];
    const input = {
      name: 'INPUT0',
      datatype: 'FP32',
      shape: [2, 2],
      parameters: {},
      get data() {
        seen.push(gpu.stats());
        return new Float32Array([1, 2, 3, 4]);
      },
    };
    const request = { batchSize: 2, input: () => input } as unknown as ExecuteRequest;
    const execute = model.execute as NonNullable<typeof model.execute>;
    const outputs = await execute(request, { signal: new AbortController().signal, computeStarted() {} });
    // Read once, after the execution took the slot and before it ended (no wall time counted yet).
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ executions: 1, wallMs: 0, queued: 0 });
    expect(gpu.stats().executions).toBe(1);
    const [output] = outputs;
    const values =
      output !== undefined && 'raw' in output && output.raw instanceof Uint8Array
        ? new Float32Array(output.raw.buffer, output.raw.byteOffset, output.raw.byteLength / 4)
        : (output as { data: Float32Array }).data;
    expect([...values]).toEqual([2, 4, 6, 8]);
    expect(output).toMatchObject({ name: 'OUTPUT0', datatype: 'FP32', shape: [2, 2] });
  });

  it('drops a cancelled execution from the queue', async () => {
    const gpu = new SimulatedGpu({ baseMs: 10, perRowMs: 0 });
    const controller = new AbortController();
    const first = gpu.run(1);
    const second = gpu.run(1, controller.signal);
    expect(gpu.stats().queued).toBe(1);
    controller.abort();
    await expect(second).rejects.toMatchObject({ code: 1 });
    await first;
    expect(gpu.stats()).toMatchObject({ executions: 1, queued: 0 });
  });
});

describe('CallRecorder', () => {
  it('keeps the last calls, oldest first', () => {
    const recorder = new CallRecorder(3);
    for (let i = 0; i < 5; i++) recorder.record({ method: `M${i}`, model: undefined, metadata: {}, time: i });
    expect(recorder.list().map((call) => call.method)).toEqual(['M2', 'M3', 'M4']);
    recorder.clear();
    expect(recorder.list()).toEqual([]);
  });
});

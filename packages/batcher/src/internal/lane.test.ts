import { buildInferRequest, type InferRequest } from '@infergate/core';
import { describe, expect, it } from 'vitest';
import { Lane } from './lane.js';
import { PendingCall } from './pending-call.js';

function lane(): Lane {
  return new Lane('m', '', 8, 2, { maxQueueDelayMs: 10, server: undefined, mode: 'fill' });
}

function request(width: number, parameters?: InferRequest['parameters']): InferRequest {
  const data = new Float32Array(width);
  const built = buildInferRequest('m', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, width], data }]);
  return parameters === undefined ? built : { ...built, parameters };
}

function call(from: InferRequest): PendingCall {
  return new PendingCall(from, {}, 1, 64, 0, undefined);
}

const weight = () => 1;

describe('lane buckets', () => {
  it('reuses the bucket that emptied for the next call of the same layout, and only for it', () => {
    const subject = lane();
    const first = subject.bucket(request(16), 0, undefined, weight);
    first.queue.push(call(request(16)));
    expect(first.queue.take(8)).toHaveLength(1);
    subject.prune(first);
    expect(subject.buckets.size).toBe(0);
    // Another layout gets a bucket of its own; the spare is kept for its layout.
    const other = subject.bucket(request(4), 0, undefined, weight);
    expect(other).not.toBe(first);
    expect(subject.bucket(request(16), 0, undefined, weight)).toBe(first);
    expect(subject.buckets.get(first.key)).toBe(first);
    expect(subject.buckets.size).toBe(2);
    // Same layout, another priority: not the same bucket.
    subject.prune(first);
    expect(subject.bucket(request(16), 2, undefined, weight)).not.toBe(first);
  });

  it('prefers a live bucket of the same key over the spare', () => {
    const subject = lane();
    const spare = subject.bucket(request(16), 0, undefined, weight);
    subject.prune(spare);
    // Empty parameters give the same key as none, but a template with parameters is matched by key.
    const live = subject.bucket(request(16, {}), 0, undefined, weight);
    expect(live).not.toBe(spare);
    live.queue.push(call(request(16, {})));
    expect(subject.bucket(request(16), 0, undefined, weight)).toBe(live);
    expect(subject.buckets.size).toBe(1);
  });

  it("admission's expected wait counts the round trips' tail: slow batches now and then refuse waiting calls, not calls sent at once", () => {
    const steady = lane();
    const jittery = lane();
    // Both measured 64 batches of mostly 4 ms; one in sixteen of the jittery lane's took 20 ms, the
    // last of them fifteen batches ago (the mean and its deviation have nearly forgotten it).
    for (let index = 0; index < 64; index++) {
      steady.planner.answered(index * 10, 8, 4);
      jittery.planner.answered(index * 10, 8, index % 16 === 0 ? 20 : 4);
    }
    expect(jittery.planner.serviceMs + 4 * jittery.planner.serviceDevMs).toBeLessThan(6);
    // A free slot: sent at once, admitted whatever the tail.
    expect(steady.expectedWaitMs()).toBe(0);
    expect(jittery.expectedWaitMs()).toBe(0);
    // Both slots busy: the steady lane expects half a round trip; the jittery one half its tail
    // (20 ms ÷ 2 slots) plus the tail's excess over the mean for the call's own batch.
    steady.inFlight = 2;
    jittery.inFlight = 2;
    expect(steady.expectedWaitMs()).toBe(2);
    expect(jittery.expectedWaitMs()).toBeCloseTo(10 + 20 - jittery.planner.serviceMs, 9);
    expect(jittery.expectedWaitMs()).toBeGreaterThan(10);
  });
});

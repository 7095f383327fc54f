// Drives the tenants' Triton and chat traffic for the run's duration, then waits for every call in
// flight (each has a deadline) — so the run ends by itself and nothing is left queued.
import { setTimeout as sleep } from 'node:timers/promises';
import { InfergateError } from '@infergate/core';
import type { DemoEnvironment } from './environment.js';
import type { Recorder } from './metrics.js';
import type { TenantSpec } from './tenants.js';

const TRITON_TIMEOUT_MS = 2_000;
const CHAT_TIMEOUT_MS = 5_000;
const CHAT_MAX_IN_FLIGHT = 16;
const TICK_MS = 5;

const PROMPTS = [
  'Summarise the incident report in two sentences.',
  'Classify this support ticket: my invoice shows the wrong VAT rate.',
  'Translate "the batch is full" into French.',
  'Suggest a title for a post about GPU batching.',
  'Extract the order number from: order #A-1043 arrived damaged.',
  'Write a haiku about circuit breakers.',
];

/** mulberry32: a small seeded generator, so a run's prompts repeat with the same --seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function codeOf(error: unknown): string {
  return error instanceof InfergateError ? error.code : 'UNKNOWN';
}

export interface WorkloadOptions {
  env: DemoEnvironment;
  tenants: readonly TenantSpec[];
  recorder: Recorder;
  durationS: number;
  seed: number;
}

/** Runs the load; resolves once the duration is over and every call has finished. */
export async function runWorkload(options: WorkloadOptions): Promise<void> {
  const { env, tenants, recorder, durationS } = options;
  const random = seeded(options.seed);
  const inFlight = new Set<Promise<void>>();
  const tritonInFlight = new Map<string, number>();
  const chatInFlight = new Map<string, number>();
  let nextId = 1;
  let stopping = false;

  function track(promise: Promise<void>): void {
    inFlight.add(promise);
    void promise.finally(() => inFlight.delete(promise));
  }

  async function tritonCall(tenant: TenantSpec): Promise<boolean> {
    const id = nextId++;
    // A model without a batch dimension takes one "row" per call.
    const rows = env.inputs.maxBatchSize > 0 ? tenant.rows : 1;
    recorder.started(tenant.name, 'triton');
    tritonInFlight.set(tenant.name, (tritonInFlight.get(tenant.name) ?? 0) + 1);
    const started = performance.now();
    try {
      const result = await env.client.infer(env.inputs.model, env.inputs.build(rows, id), {
        tenant: tenant.name,
        timeoutMs: TRITON_TIMEOUT_MS,
      });
      const latency = performance.now() - started;
      if (!env.inputs.check(result, rows, id)) recorder.mismatches++;
      recorder.tritonOk(tenant.name, rows, latency);
      return true;
    } catch (error) {
      recorder.failed(tenant.name, 'triton', codeOf(error));
      return false;
    } finally {
      tritonInFlight.set(tenant.name, (tritonInFlight.get(tenant.name) ?? 1) - 1);
    }
  }

  async function chatCall(tenant: TenantSpec): Promise<void> {
    recorder.started(tenant.name, 'chat');
    chatInFlight.set(tenant.name, (chatInFlight.get(tenant.name) ?? 0) + 1);
    const prompt = PROMPTS[Math.floor(random() * PROMPTS.length)] as string;
    const started = performance.now();
    try {
      const response = await env.chat.chat(
        {
          model: '',
          messages: [
            { role: 'system', content: `You answer for ${tenant.name}. Be brief.` },
            { role: 'user', content: prompt },
          ],
          maxTokens: 32,
        },
        { tenant: tenant.name, timeoutMs: CHAT_TIMEOUT_MS },
      );
      recorder.chatOk(tenant.name, response.provider, performance.now() - started);
    } catch (error) {
      recorder.failed(tenant.name, 'chat', codeOf(error));
    } finally {
      chatInFlight.set(tenant.name, (chatInFlight.get(tenant.name) ?? 1) - 1);
    }
  }

  // Closed-loop callers: the next call goes when the last one ends; after a failure a short pause,
  // so a failing backend is not hammered in a tight loop.
  for (const tenant of tenants) {
    for (let worker = 0; worker < (tenant.concurrency ?? 0); worker++) {
      track(
        (async () => {
          await sleep(random() * 20); // spread the start
          while (!stopping) {
            if (!(await tritonCall(tenant))) await sleep(10 + random() * 20);
          }
        })(),
      );
    }
  }

  // Open-loop callers: calls are due at the tenant's rate whatever the latency (as real users are).
  const carry = new Map<string, { triton: number; chat: number }>();
  for (const tenant of tenants) carry.set(tenant.name, { triton: 0, chat: 0 });
  let last = recorder.now();
  const generator = setInterval(() => {
    const t = recorder.now();
    const dt = t - last;
    last = t;
    for (const tenant of tenants) {
      const due = carry.get(tenant.name) as { triton: number; chat: number };
      if (tenant.rate !== undefined) {
        due.triton += tenant.rate(t) * dt;
        for (; due.triton >= 1; due.triton--) {
          if ((tritonInFlight.get(tenant.name) ?? 0) >= tenant.maxInFlight)
            recorder.shed(tenant.name, 'triton');
          else track(tritonCall(tenant).then(() => undefined));
        }
      }
      due.chat += tenant.chatPerS * dt;
      for (; due.chat >= 1; due.chat--) {
        if ((chatInFlight.get(tenant.name) ?? 0) >= CHAT_MAX_IN_FLIGHT) recorder.shed(tenant.name, 'chat');
        else track(chatCall(tenant));
      }
    }
  }, TICK_MS);

  await sleep(durationS * 1000);
  stopping = true;
  clearInterval(generator);
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
}

import type { InferenceService } from './service.js';

export interface DemoResult {
  requests: number;
  correct: number;
  stats: ReturnType<InferenceService['stats']>;
}

/** Sends `requests` concurrent single-row requests over HTTP and checks every answer. */
export async function sendBurst(service: InferenceService, requests: number): Promise<DemoResult> {
  const answers = await Promise.all(
    Array.from({ length: requests }, async (_, index) => {
      const values = [index, index + 0.5, -index];
      const response = await fetch(`${service.url}/double`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ values }),
      });
      const body = (await response.json()) as { doubled?: number[] };
      return JSON.stringify(body.doubled) === JSON.stringify(values.map((value) => value * 2));
    }),
  );
  return { requests, correct: answers.filter(Boolean).length, stats: service.stats() };
}

// Child process of the Redis acceptance test: `calls` concurrent reserve → (actual ≤ estimate) →
// settle/release against one shared Redis budget. Prints one JSON line with what it did.
//   node_modules/.bin/tsx --conditions=source test/redis/concurrent-spender.ts <redisUrl> <prefix> <limitUsd> <seed> <calls>
import { Redis } from 'ioredis';
import { CostTracker, RedisBudgetStore } from '../../packages/cost/src/index.js';

const [url = '', prefix = '', limit = '1', seedText = '1', callsText = '50'] = process.argv.slice(2);
let seed = Number(seedText);
const random = () => {
  seed = (seed * 48271) % 2147483647;
  return seed / 2147483647;
};

const redis = new Redis(url, { maxRetriesPerRequest: 2 });
const tracker = new CostTracker({
  store: new RedisBudgetStore({ redis, prefix }),
  budgets: [{ id: 'shared', window: 'day', hardLimitUsd: Number(limit) }],
});
let rejected = 0;
let settledUsd = 0;
let largestEstimateUsd = 0;
await Promise.all(
  Array.from({ length: Number(callsText) }, async (_, index) => {
    const estimate = Math.round((0.01 + random() * 0.09) * 1e6) / 1e6;
    largestEstimateUsd = Math.max(largestEstimateUsd, estimate);
    const actual = Math.round(estimate * random() * 1e6) / 1e6;
    let reservation: Awaited<ReturnType<CostTracker['reserve']>>;
    try {
      reservation = await tracker.reserve({ tenant: `t${index % 3}`, estimateUsd: estimate });
    } catch {
      rejected++;
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, random() * 20));
    if (index % 7 === 0) await tracker.release(reservation);
    else {
      await tracker.settle(reservation, { costUsd: actual });
      settledUsd += actual;
    }
  }),
);
console.log(JSON.stringify({ rejected, settledUsd, largestEstimateUsd }));
redis.disconnect();

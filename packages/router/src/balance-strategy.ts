import type { LoadStats } from './load-stats.js';

/** How a group of peers shares calls. See docs/concepts/routing.md, "Balancing strategies". */
export const BALANCE_STRATEGIES = ['weighted', 'least-in-flight', 'p2c-ewma', 'lowest-cost'] as const;
export type BalanceStrategy = (typeof BALANCE_STRATEGIES)[number];

/** One group member as the strategy sees it: its weight and the figures of its first choice. */
export interface BalanceMember {
  weight: number;
  /** Efraimidis–Spirakis key random^(1/weight): sorting by it descending is a weighted random order. */
  key: number;
  load: LoadStats | undefined;
  /** Estimated price of the call there, in USD; undefined when unknown. */
  cost: number | undefined;
}

/**
 * p2c-ewma's cost of sending one more call: the latency average (peak-sensitive) times the calls
 * already in flight plus this one. A member never measured borrows `fallbackMs` (its peers' mean),
 * so a new or recovered target is neither flooded nor starved.
 */
export function loadCost(load: LoadStats | undefined, fallbackMs: number): number {
  if (load === undefined) return fallbackMs;
  const latency = load.samples === 0 ? fallbackMs : load.peakMs;
  // The small constant keeps in-flight counts apart while latencies are still 0 (nothing measured).
  return (latency + 1e-3) * (load.inFlight + 1);
}

/**
 * Orders a group's members, best first; the rest of the order is the in-group failover. `weighted`
 * is the weighted random order. `least-in-flight`: fewest in-flight calls per unit of weight, ties
 * broken by the weighted order. `p2c-ewma`: the first two of the weighted random order (two choices
 * drawn by weight), the cheaper by `loadCost` first — the rest follow by that cost. `lowest-cost`:
 * cheapest estimated price first, unknown prices last, ties in weighted order.
 */
export function orderMembers<M extends BalanceMember>(members: M[], strategy: BalanceStrategy): M[] {
  members.sort((a, b) => b.key - a.key);
  if (strategy === 'weighted' || members.length < 2) return members;
  if (strategy === 'least-in-flight') {
    const inFlight = (member: M) => (member.load?.inFlight ?? 0) / member.weight;
    return members.sort((a, b) => inFlight(a) - inFlight(b));
  }
  if (strategy === 'lowest-cost') {
    const price = (member: M) => member.cost ?? Number.POSITIVE_INFINITY;
    return members.sort((a, b) => {
      const difference = price(a) - price(b);
      return Number.isNaN(difference) ? 0 : difference;
    });
  }
  let measured = 0;
  let total = 0;
  for (const member of members) {
    if (member.load !== undefined && member.load.samples > 0) {
      measured += 1;
      total += member.load.peakMs;
    }
  }
  const fallbackMs = measured === 0 ? 0 : total / measured;
  const costs = new Map<M, number>();
  for (const member of members) costs.set(member, loadCost(member.load, fallbackMs));
  const cost = (member: M) => costs.get(member) as number;
  const [first, second] = members as [M, M];
  const rest = members.slice(2).sort((a, b) => cost(a) - cost(b));
  const pair = cost(second) < cost(first) ? [second, first] : [first, second];
  return [...pair, ...rest];
}

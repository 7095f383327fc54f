import { affinityOrder } from './affinity.js';
import { type BalanceMember, type BalanceStrategy, orderMembers } from './balance-strategy.js';
import type { RouteNode } from './config.js';
import type { LoadBook } from './load-stats.js';
import { isFixedRoute, planRoute } from './route-plan.js';
import type { RouteTarget } from './route-target.js';

/** What one call tells the planner: the model it runs (load figures are per model) and its price. */
export interface PlanContext<T> {
  model?: string | undefined;
  /** Estimated price of the call on a target, in USD (`lowest-cost`). */
  costOf?: ((target: T) => number | undefined) | undefined;
  /** Keeps calls with the same key on the same member of each group (rendezvous hashing). */
  affinityKey?: string | undefined;
}

function usesLoad(node: RouteNode, strategy: BalanceStrategy): boolean {
  if (typeof node === 'string') return false;
  if ('fallback' in node) return node.fallback.some((step) => usesLoad(step, strategy));
  if (node.group.length > 1 && (node.strategy ?? strategy) !== 'weighted') return true;
  return node.group.some((member) => usesLoad(member.route, strategy));
}

interface Member<T> extends BalanceMember {
  targets: T[];
  first: string | undefined;
}

/**
 * The order in which one call tries the targets of a route. A route of plain `weighted` groups
 * keeps the weighted random order of `planRoute` (planned once when nothing in it is random); a
 * group with another strategy orders its members by their load figures or price for this call,
 * each member judged by its own first choice.
 */
export class RoutePlanner<T extends RouteTarget> {
  readonly #route: RouteNode;
  readonly #targets: ReadonlyMap<string, T>;
  readonly #strategy: BalanceStrategy;
  readonly #random: () => number;
  readonly #book: LoadBook;
  readonly #byLoad: boolean;
  readonly #maxLoadFactor: number | undefined;
  #fixed: readonly T[] | undefined;

  constructor(
    route: RouteNode,
    targets: ReadonlyMap<string, T>,
    strategy: BalanceStrategy,
    random: () => number,
    book: LoadBook,
    maxLoadFactor: number | undefined,
  ) {
    this.#maxLoadFactor = maxLoadFactor;
    this.#route = route;
    this.#targets = targets;
    this.#strategy = strategy;
    this.#random = random;
    this.#book = book;
    this.#byLoad = usesLoad(route, strategy);
  }

  candidates(context: PlanContext<T> = {}): readonly T[] {
    const keyed = context.affinityKey !== undefined;
    if (this.#fixed !== undefined && !keyed) return this.#fixed;
    if (this.#byLoad || keyed) return this.#plan(this.#route, context, []);
    const list: T[] = [];
    for (const name of planRoute(this.#route, this.#random)) {
      const target = this.#targets.get(name);
      if (target !== undefined) list.push(target);
    }
    if (isFixedRoute(this.#route)) this.#fixed = list;
    return list;
  }

  #plan(node: RouteNode, context: PlanContext<T>, into: T[]): T[] {
    if (typeof node === 'string') {
      const target = this.#targets.get(node);
      if (target !== undefined && !into.includes(target)) into.push(target);
    } else if ('fallback' in node) {
      for (const step of node.fallback) this.#plan(step, context, into);
    } else if (node.group.length === 1) {
      this.#plan((node.group[0] as { route: RouteNode }).route, context, into);
    } else {
      const members: Member<T>[] = node.group.map((member) => {
        const weight = member.weight ?? 1;
        const targets = this.#plan(member.route, context, []);
        const first = targets[0];
        return {
          weight,
          key: this.#random() ** (1 / weight),
          targets,
          first: first?.name,
          load: first === undefined ? undefined : this.#book.get(first.name, context.model),
          cost: first === undefined ? undefined : context.costOf?.(first),
        };
      });
      const key = context.affinityKey;
      const ordered =
        key === undefined
          ? orderMembers(members, node.strategy ?? this.#strategy)
          : affinityOrder(members, key, this.#book, this.#maxLoadFactor);
      for (const member of ordered) {
        for (const target of member.targets) if (!into.includes(target)) into.push(target);
      }
    }
    return into;
  }
}

/**
 * Without a `route`: a fallback chain in the listed order, or one group of all targets when a
 * strategy balances load or calls carry affinity keys (both act within groups).
 */
export function defaultRoute(
  targets: readonly RouteTarget[],
  strategy: BalanceStrategy,
  affinity: boolean,
): RouteNode {
  const names = targets.map((target) => target.name);
  if (strategy === 'weighted' && !affinity) return { fallback: names };
  return { group: names.map((route) => ({ route })) };
}

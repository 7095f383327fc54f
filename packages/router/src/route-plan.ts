import type { RouteNode } from './config.js';

/** True when the route has no weighted group of several members: its order never changes. */
export function isFixedRoute(node: RouteNode): boolean {
  if (typeof node === 'string') return true;
  if ('fallback' in node) return node.fallback.every(isFixedRoute);
  return node.group.length === 1 && isFixedRoute((node.group[0] as { route: RouteNode }).route);
}

/**
 * The order in which one call tries targets: a fallback chain in its order, a group's members in a
 * weighted random order (Efraimidis–Spirakis: sort by random^(1/weight)), so the first choice is
 * proportional to weight and the others are in-group failover. Each target appears once.
 */
export function planRoute(node: RouteNode, random: () => number, into: string[] = []): string[] {
  if (typeof node === 'string') {
    if (!into.includes(node)) into.push(node);
  } else if ('fallback' in node) {
    for (const step of node.fallback) planRoute(step, random, into);
  } else if (node.group.length === 1) {
    planRoute((node.group[0] as { route: RouteNode }).route, random, into);
  } else {
    const keyed = node.group.map((member) => ({
      route: member.route,
      key: random() ** (1 / (member.weight ?? 1)),
    }));
    keyed.sort((a, b) => b.key - a.key);
    for (const member of keyed) planRoute(member.route, random, into);
  }
  return into;
}

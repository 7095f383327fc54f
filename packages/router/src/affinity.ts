import { ErrorCode, InfergateError } from '@infergate/core';
import type { LoadBook } from './load-stats.js';
import type { RouteCallOptions } from './route-call-options.js';

/** 32-bit FNV-1a of a string: cheap, and spread well enough once finished by `mix`. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** MurmurHash3's finaliser: every input bit reaches every output bit. */
function mix(value: number): number {
  let hash = value >>> 0;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/** A group member as affinity sees it: its weight and the name of its first target. */
export interface AffinityMember {
  weight: number;
  first: string | undefined;
}

/**
 * Orders a group's members for an affinity key by weighted rendezvous hashing (highest random
 * weight): each member scores −weight / ln(hash(key, member)), the best score is the key's home, and
 * removing a member moves only the keys that lived on it. Bounded load (as in Mirrokni, Thorup and
 * Zadimoghaddam's consistent hashing with bounded loads), when `maxLoadFactor` is set: a member
 * whose target already has more than `maxLoadFactor` × its fair share of the group's calls in flight
 * goes to the back, so a hot key spills to its next choice instead of piling onto one target.
 * Members whose breaker is open, that are cooling or that admission refuses are skipped later by
 * the route engine, which then also lands on the key's next choice.
 */
export function affinityOrder<M extends AffinityMember>(
  members: M[],
  key: string,
  book: LoadBook,
  maxLoadFactor: number | undefined,
): M[] {
  const keyHash = hashString(key);
  let total = 0;
  if (maxLoadFactor !== undefined)
    for (const member of members) if (member.first !== undefined) total += book.inFlight(member.first);
  const cap =
    maxLoadFactor === undefined
      ? Number.POSITIVE_INFINITY
      : Math.ceil((maxLoadFactor * (total + 1)) / members.length);
  const scored = members.map((member) => {
    const unit = (mix(keyHash ^ Math.imul(hashString(member.first ?? ''), 0x9e3779b1)) + 1) / 4_294_967_297;
    const full = member.first !== undefined && book.inFlight(member.first) >= cap;
    return { member, full, score: -member.weight / Math.log(unit) };
  });
  scored.sort((a, b) => Number(a.full) - Number(b.full) || b.score - a.score);
  return scored.map((entry) => entry.member);
}

/**
 * The affinity key of a call: its own `affinityKey`, else the router's key function's; undefined
 * without either. INVALID_ARGUMENT when the call's key is not a non-empty string.
 */
export function affinityKeyOf<Q>(
  request: Q,
  options: RouteCallOptions,
  key: ((request: Q, options: RouteCallOptions) => string | undefined) | undefined,
): string | undefined {
  const own = options.affinityKey;
  if (own !== undefined) {
    if (typeof own !== 'string' || own === '')
      throw new InfergateError(ErrorCode.InvalidArgument, 'affinityKey must be a non-empty string');
    return own;
  }
  const derived = key?.(request, options);
  return typeof derived === 'string' && derived !== '' ? derived : undefined;
}

/**
 * A target's backpressure cool-down. A busy answer ("queue full", 429 without Retry-After) means
 * "momentarily full", so the first cool-down is short; it doubles only while busy answers keep
 * coming right after each cool-down ends, and starts short again once they stop. Answers that
 * arrive while the target is already cooling (the rest of one surge) do not lengthen it.
 */
export class TargetCooling {
  /** Skipped until this time (epoch ms). */
  until = 0;
  /** Length of the current (or last) cool-down, in ms. */
  lengthMs = 0;
  #streak = 0;
  #lastAt = Number.NEGATIVE_INFINITY;

  /** True while the target is cooling. */
  active(now: number): boolean {
    return this.until > now;
  }

  /**
   * Records a busy answer. `retryAfterMs` (the target's own hint) wins, capped at `maxCooldownMs`;
   * otherwise `firstCooldownMs · 2^(repeats)`, capped at `cooldownMs`.
   */
  backpressure(
    now: number,
    retryAfterMs: number | undefined,
    options: { firstCooldownMs: number; cooldownMs: number; maxCooldownMs: number },
  ): void {
    if (retryAfterMs !== undefined) {
      const wait = Math.min(options.maxCooldownMs, retryAfterMs);
      if (now + wait > this.until) {
        this.until = now + wait;
        this.lengthMs = wait;
      }
      this.#lastAt = now;
      return;
    }
    if (this.until > now) return; // same surge, already cooling
    // Busy again soon after the last busy answer: it repeats, so wait longer; else start short.
    const repeats = now - this.#lastAt <= Math.max(this.lengthMs, options.firstCooldownMs) * 2;
    this.#streak = repeats ? this.#streak + 1 : 0;
    this.#lastAt = now;
    const wait = Math.min(options.cooldownMs, options.firstCooldownMs * 2 ** this.#streak);
    this.until = now + wait;
    this.lengthMs = wait;
  }
}

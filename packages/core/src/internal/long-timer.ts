// Timers for any delay. Node's setTimeout and setInterval take at most 2^31 − 1 ms (about 24.8
// days): a longer delay, or Infinity, prints a TimeoutOverflowWarning and fires after 1 ms (an
// interval then repeats every 1 ms). Every timer whose delay comes from an option, a saved state,
// a server or arithmetic on them goes through here. Also the internal entry
// `@infergate/core/internal/long-timer` (no API promise) for the other packages.

/** The longest delay setTimeout and setInterval honour, in ms (2^31 − 1). */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * A timer from `setLongTimeout` or `setLongInterval`: Node's own for a delay it honours, else a
 * `LongTimeout` that re-arms in steps. Stop it with `clearLongTimer`.
 */
export type LongTimer = ReturnType<typeof setTimeout> | LongTimeout;

/**
 * A delay longer than a timer takes, armed in steps of at most `MAX_TIMER_MS` until what was asked
 * has passed (the steps fire late, never early, so neither does the whole). Keeps `unref` across
 * the steps.
 */
export class LongTimeout {
  readonly #callback: (arg: never) => void;
  readonly #arg: unknown;
  /** The period of an interval; undefined for a one-off. */
  readonly #period: number | undefined;
  /** What is left after the step now armed. */
  #left: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #referenced = true;

  constructor(callback: (arg: never) => void, ms: number, arg: unknown, repeat: boolean) {
    this.#callback = callback;
    this.#arg = arg;
    this.#period = repeat ? ms : undefined;
    this.#left = ms;
    this.#arm();
  }

  #arm(): void {
    const step = Math.min(this.#left, MAX_TIMER_MS);
    this.#left -= step;
    const timer = setTimeout(onStep, step, this);
    if (!this.#referenced) timer.unref?.();
    this.#timer = timer;
  }

  /** @internal One step has passed. */
  step(): void {
    if (this.#left > 0) {
      this.#arm();
      return;
    }
    if (this.#period === undefined) {
      this.#timer = undefined;
    } else {
      // Armed before the callback runs, so that a callback which clears the interval stops it.
      this.#left = this.#period;
      this.#arm();
    }
    (this.#callback as (arg: unknown) => void)(this.#arg);
  }

  /** True while the timer will still fire. */
  get armed(): boolean {
    return this.#timer !== undefined;
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** As Node's `Timeout.unref()`: the timer does not hold the event loop open, in any step. */
  unref(): this {
    this.#referenced = false;
    this.#timer?.unref?.();
    return this;
  }

  ref(): this {
    this.#referenced = true;
    this.#timer?.ref?.();
    return this;
  }

  hasRef(): boolean {
    return this.#referenced;
  }
}

function onStep(timer: LongTimeout): void {
  timer.step();
}

/**
 * `setTimeout(callback, ms, arg)` for any `ms`: up to `MAX_TIMER_MS` Node's own timer (nothing more
 * is allocated), longer a `LongTimeout` that fires when `ms` has passed, and Infinity no timer at
 * all (undefined: it never fires). NaN and delays below 1 fire at once, as setTimeout's do.
 */
export function setLongTimeout<A>(callback: (arg: A) => void, ms: number, arg: A): LongTimer | undefined;
export function setLongTimeout(callback: () => void, ms: number): LongTimer | undefined;
export function setLongTimeout<A>(callback: (arg: A) => void, ms: number, arg?: A): LongTimer | undefined {
  if (!(ms > MAX_TIMER_MS)) {
    // setTimeout allocates an arguments array only when given one: a callback without one gets none.
    return arg === undefined ? setTimeout(callback as () => void, ms) : setTimeout(callback, ms, arg);
  }
  if (ms === Number.POSITIVE_INFINITY) return undefined;
  return new LongTimeout(callback as (arg: never) => void, ms, arg, false);
}

/** `setInterval(callback, ms)` for any `ms`: a period over `MAX_TIMER_MS` repeats in steps; Infinity never fires. */
export function setLongInterval(callback: () => void, ms: number): LongTimer | undefined {
  if (!(ms > MAX_TIMER_MS)) return setInterval(callback, ms);
  return ms === Number.POSITIVE_INFINITY ? undefined : new LongTimeout(callback, ms, undefined, true);
}

/** Stops a timer from `setLongTimeout` or `setLongInterval` (undefined is fine). */
export function clearLongTimer(timer: LongTimer | undefined): void {
  if (timer instanceof LongTimeout) timer.clear();
  else clearTimeout(timer);
}

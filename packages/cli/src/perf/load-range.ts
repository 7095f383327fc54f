import { usageError } from '../internal/command-line.js';

/**
 * `START[:END[:STEP]]` → the loads to measure. STEP is added (`1:16:4` → 1, 5, 9, 13) or, written
 * `xF`, multiplied (`1:64:x2` → 1, 2, 4, …, 64). Bounded so that a typo cannot start a run of
 * thousands of steps.
 */
export function parseLoadRange(text: string, option: string, integer: boolean, maxSteps = 64): number[] {
  const parts = text.split(':');
  const number = (part: string, what: string) => {
    const value = Number(part);
    if (
      part.trim() === '' ||
      !Number.isFinite(value) ||
      value <= 0 ||
      (integer && !Number.isInteger(value))
    ) {
      throw usageError(`--${option} '${text}': ${what} must be a positive ${integer ? 'integer' : 'number'}`);
    }
    return value;
  };
  if (parts.length > 3) throw usageError(`--${option} '${text}' must be START[:END[:STEP]]`);
  const start = number(parts[0] ?? '', 'START');
  const end = parts[1] === undefined ? start : number(parts[1], 'END');
  if (end < start) throw usageError(`--${option} '${text}': END is below START`);
  const stepText = parts[2] ?? (integer ? 'x2' : String(start));
  const multiply = stepText.startsWith('x');
  const step = number(multiply ? stepText.slice(1) : stepText, 'STEP');
  if (multiply && step <= 1) throw usageError(`--${option} '${text}': a factor STEP must be above 1`);
  const loads: number[] = [];
  for (let load = start; load <= end * (1 + 1e-9); load = multiply ? load * step : load + step) {
    if (loads.length === maxSteps) throw usageError(`--${option} '${text}' has more than ${maxSteps} steps`);
    loads.push(integer ? Math.round(load) : load);
  }
  return loads;
}

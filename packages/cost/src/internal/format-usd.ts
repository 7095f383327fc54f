/**
 * Dollars for a human reading an error message: cents from $1 up, four significant digits below
 * (LLM calls cost fractions of a cent). Float noise such as 0.00010279999999999999 becomes
 * "$0.0001028"; exact amounts stay in the error's `details`.
 */
export function formatUsd(value: number): string {
  if (!Number.isFinite(value)) return `$${value}`;
  const sign = value < 0 ? '-' : '';
  const amount = Math.abs(value);
  if (amount === 0) return '$0.00';
  if (amount >= 1) return `${sign}$${amount.toFixed(2)}`;
  // Enough decimals for four significant digits, at least cents, at most nano-dollars.
  const decimals = Math.min(9, Math.max(2, 3 - Math.floor(Math.log10(amount))));
  const fixed = amount.toFixed(decimals).replace(/(\.\d\d\d*?)0+$/, '$1');
  return `${sign}$${fixed}`;
}

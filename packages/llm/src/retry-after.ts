/** Anything with a case-insensitive `get`, such as the Fetch API's `Headers`. */
export interface HeaderSource {
  get(name: string): string | null;
}

/**
 * How long the server asked us to wait, in ms: `retry-after-ms` (OpenAI) wins over `Retry-After`,
 * which is either delta-seconds (decimals tolerated) or an HTTP date. Undefined when absent or
 * unparsable; a date in the past gives 0.
 */
export function parseRetryAfter(headers: HeaderSource, now: number = Date.now()): number | undefined {
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null) {
    const value = Number(milliseconds.trim());
    if (milliseconds.trim() !== '' && Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter === undefined || retryAfter === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(retryAfter)) return Math.round(Number(retryAfter) * 1000);
  // An HTTP date names its day and month; Date.parse would also take '-3' as a year.
  if (!/[a-z]{3}/i.test(retryAfter)) return undefined;
  const date = Date.parse(retryAfter);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

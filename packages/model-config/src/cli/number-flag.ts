/** The number a numeric flag holds; a usage error naming the flag otherwise. */
export function numberFlag(flag: string, text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value))
    throw new Error(`${flag} must be a number, got '${text}'`);
  return value;
}

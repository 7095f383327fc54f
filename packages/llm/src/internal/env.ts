/** An API key from the environment; blank counts as unset. */
export function apiKeyFromEnv(name: string): string | undefined {
  const value = process.env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

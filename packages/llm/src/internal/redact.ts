/** Replaces every occurrence of each secret (API keys) in `text` with a marker. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    out = out.split(secret).join('[REDACTED]');
  }
  return out;
}

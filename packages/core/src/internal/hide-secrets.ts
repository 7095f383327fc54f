import type { ResolvedClientOptions } from '../options.js';

const inspectCustom = Symbol.for('nodejs.util.inspect.custom');
const HIDDEN = '[hidden]';

/** The options as logs may show them: the access token and every header value hidden. */
function displayed(options: ResolvedClientOptions): Record<string, unknown> {
  return {
    ...options,
    ...(options.accessToken !== undefined ? { accessToken: HIDDEN } : {}),
    headers: Object.fromEntries(Object.keys(options.headers).map((name) => [name, HIDDEN])),
    ...(typeof options.tls === 'object' && options.tls.key !== undefined
      ? { tls: { ...options.tls, key: HIDDEN } }
      : {}),
  };
}

/**
 * Makes resolved client options safe to log: `util.inspect`, `console.log` and `JSON.stringify`
 * of the options, or of a client holding them, show the access token, header values and TLS key
 * as "[hidden]". The values themselves stay readable for the transport.
 */
export function hideSecrets(options: ResolvedClientOptions): ResolvedClientOptions {
  Object.defineProperty(options, inspectCustom, { value: () => displayed(options), enumerable: false });
  Object.defineProperty(options, 'toJSON', { value: () => displayed(options), enumerable: false });
  return options;
}

import { EXTENSION_OF, GROUP_OF, type Restriction } from './restriction.js';

/** An HTTP refusal: the status and Triton's error text. */
export interface HttpRefusal {
  status: number;
  message: string;
}

/**
 * What the HTTP port answers before running a call: a server without the call's extension has no
 * such endpoint (404 "Not Found", as a KServe server without it answers), and a restricted group
 * needs the header itself — over HTTP Triton checks `<header>: <value>` without gRPC's
 * `triton-grpc-protocol-` prefix, and refuses with 403.
 */
export function httpAccessRefusal(
  method: string,
  headers: Readonly<Record<string, string>>,
  restrictions: readonly Restriction[],
  extensions: readonly string[],
): HttpRefusal | undefined {
  const extension = EXTENSION_OF[method];
  if (extension !== undefined && !extensions.includes(extension))
    return { status: 404, message: 'Not Found' };
  const group = GROUP_OF[method];
  for (const restriction of restrictions) {
    if (group === undefined || !restriction.groups.includes(group)) continue;
    const header = restriction.header.toLowerCase();
    if (headers[header] !== restriction.value) {
      return { status: 403, message: `This API is restricted, expecting header '${header}'` };
    }
  }
  return undefined;
}

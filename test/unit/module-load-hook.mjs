// A module resolve hook (node:module register) for core-import-deferral-fixture.ts: posts every
// URL the ESM loader resolves to the port it is given, and answers 'flush' once all earlier URLs
// are posted (one port keeps its messages in order).
let port;

export function initialize(data) {
  port = data.port;
  port.on('message', (message) => {
    if (message === 'flush') port.postMessage('flushed');
  });
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  port.postMessage(resolved.url);
  return resolved;
}

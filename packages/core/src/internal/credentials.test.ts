// The TLS options are checked when a client is made, without grpc-js: the check must fail where
// grpc-js's `credentials.createSsl` fails, with the same error.
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { createTritonClient } from '../client.js';
import { checkChannelSecurity, createCredentials } from './credentials.js';

const garbled = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n';
const garbledKey = '-----BEGIN PRIVATE KEY-----\nbm90\n-----END PRIVATE KEY-----\n';

function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('checkChannelSecurity', () => {
  it('refuses PEM that does not parse, with the error grpc-js gives', () => {
    const ours = thrownBy(() => checkChannelSecurity(true, { cert: garbled, key: garbledKey }));
    const theirs = thrownBy(() =>
      grpc.credentials.createSsl(null, Buffer.from(garbledKey), Buffer.from(garbled)),
    );
    expect(ours).toBeInstanceOf(Error);
    expect((ours as Error).message).toBe((theirs as Error).message);
    expect((ours as { code?: unknown }).code).toBe((theirs as { code?: unknown }).code);
  });

  it('fails the client constructor on either engine', () => {
    for (const engine of ['http2', 'grpc-js'] as const) {
      expect(() =>
        createTritonClient({ url: 'grpcs://h:1', engine, tls: { cert: garbled, key: garbledKey } }),
      ).toThrow(/asn1|PEM|key/i);
    }
  });

  it('makes no secure context for plaintext, and grpc-js credentials of either kind', () => {
    expect(checkChannelSecurity(false, { ca: garbled })).toBeUndefined();
    expect(createCredentials(undefined)._isSecure()).toBe(false);
    expect(createCredentials(checkChannelSecurity(true, true))._isSecure()).toBe(true);
  });
});

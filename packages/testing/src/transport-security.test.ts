import { create } from '@bufbuild/protobuf';
import { createTritonClient, type InfergateError } from '@infergate/core';
import { GRPCInferenceService } from '@infergate/core/proto';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateTestCertificates, type TestCertificates } from './test-certificates.js';
import { startTestServer } from './test-server.js';

let certs: TestCertificates;

beforeAll(() => {
  certs = generateTestCertificates();
});

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'OK',
    (error: InfergateError) => error.code,
  );

describe('TLS', () => {
  it('serves TLS to a client that trusts the CA', async () => {
    const server = await startTestServer({ tls: { key: certs.serverKey, cert: certs.serverCert } });
    const client = createTritonClient({ url: `grpcs://${server.url}`, tls: { ca: certs.ca } });
    try {
      expect(await client.serverLive()).toBe(true);
      const plain = createTritonClient({ url: server.url });
      expect(await codeOf(plain.serverLive({ timeoutMs: 1000 }))).not.toBe('OK');
      await plain.close();
    } finally {
      await client.close();
      await server.stop();
    }
  });

  it('requires a client certificate for mutual TLS', async () => {
    const server = await startTestServer({
      tls: { key: certs.serverKey, cert: certs.serverCert, ca: certs.ca, requireClientCert: true },
    });
    const good = createTritonClient({
      url: `grpcs://${server.url}`,
      tls: { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey },
    });
    const anonymous = createTritonClient({ url: `grpcs://${server.url}`, tls: { ca: certs.ca } });
    try {
      expect(await good.serverReady()).toBe(true);
      expect(await codeOf(anonymous.serverReady({ timeoutMs: 2000 }))).not.toBe('OK');
    } finally {
      await good.close();
      await anonymous.close();
      await server.stop();
    }
  });
});

describe('compression', () => {
  it('accepts gzip-compressed requests', async () => {
    const server = await startTestServer();
    const client = createTritonClient({
      url: server.url,
      channelOptions: { 'grpc.default_compression_algorithm': 2, 'grpc.default_compression_level': 2 },
    });
    try {
      const data = new Float32Array(4096).fill(1.5);
      const result = await client.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data }]);
      expect((result.output('OUTPUT0').data as Float32Array)[4095]).toBe(1.5);
      expect(server.calls.at(-1)?.metadata['grpc-encoding']).toBe('gzip');
    } finally {
      await client.close();
      await server.stop();
    }
  });
});

describe('restricted protocols and extensions', () => {
  it('answers UNAVAILABLE without the header, like --grpc-restricted-protocol (core reports PERMISSION_DENIED)', async () => {
    const server = await startTestServer({
      restricted: { groups: ['inference', 'model-repository'], header: 'infer-key', value: 's3cret' },
    });
    const client = createTritonClient({ url: server.url });
    const allowed = createTritonClient({
      url: server.url,
      headers: { 'triton-grpc-protocol-infer-key': 's3cret' },
    });
    try {
      expect(await client.serverLive()).toBe(true);
      const denied = await client
        .infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }])
        .catch((error: InfergateError) => error);
      expect((denied as InfergateError).code).toBe('PERMISSION_DENIED');
      expect((denied as InfergateError).grpcCode).toBe(14);
      expect((denied as InfergateError).message).toContain(
        "This protocol is restricted, expecting header 'triton-grpc-protocol-infer-key'",
      );
      const index = GRPCInferenceService.method.repositoryIndex;
      expect(await codeOf(client.grpc.unary(index, create(index.input), {}))).toBe('PERMISSION_DENIED');
      expect(await codeOf(allowed.grpc.unary(index, create(index.input), {}))).toBe('OK');
      const ok = await allowed.infer('identity', [{ name: 'INPUT0', datatype: 'FP32', data: [1] }]);
      expect(ok.output('OUTPUT0').toArray()).toEqual([1]);
    } finally {
      await client.close();
      await allowed.close();
      await server.stop();
    }
  });

  it('lists Triton extensions by default and answers UNIMPLEMENTED for ones left out', async () => {
    const full = await startTestServer();
    const lacking = await startTestServer({ extensions: ['model_configuration', 'parameters'] });
    const a = createTritonClient({ url: full.url });
    const b = createTritonClient({ url: lacking.url });
    try {
      expect((await a.serverMetadata()).extensions).toEqual([
        'classification',
        'sequence',
        'model_repository',
        'model_repository(unload_dependents)',
        'schedule_policy',
        'model_configuration',
        'system_shared_memory',
        'cuda_shared_memory',
        'binary_tensor_data',
        'parameters',
        'statistics',
        'trace',
        'logging',
      ]);
      const stats = GRPCInferenceService.method.modelStatistics;
      expect(await codeOf(a.grpc.unary(stats, create(stats.input), {}))).toBe('OK');
      expect(await codeOf(b.grpc.unary(stats, create(stats.input), {}))).toBe('UNIMPLEMENTED');
    } finally {
      await a.close();
      await b.close();
      await full.stop();
      await lacking.stop();
    }
  });
});

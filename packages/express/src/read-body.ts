import { ErrorCode, InfergateError } from '@infergate/core';
import type { HttpRequest } from './http-types.js';

/** The parsed JSON body: `req.body` if a body parser ran, else read here with a size limit. */
export async function readJsonBody(request: HttpRequest, limitBytes: number): Promise<unknown> {
  if (request.body !== undefined) return request.body;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).byteLength;
    if (size > limitBytes) {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `the request body is larger than ${limitBytes} bytes`,
        {
          details: { responseStatus: 413 },
        },
      );
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '')
    throw new InfergateError(ErrorCode.InvalidArgument, 'the request body is empty; send JSON');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `the request body is not valid JSON: ${(error as Error).message}`,
    );
  }
}

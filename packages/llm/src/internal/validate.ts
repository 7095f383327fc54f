import { ErrorCode, InfergateError } from '@infergate/core';
import type { z } from 'zod';

/** Checks a provider's JSON against its schema; a mismatch is DATA_LOSS naming the first issues. */
export function validateWire<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  what: string,
  provider: string,
): z.infer<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  throw new InfergateError(
    ErrorCode.DataLoss,
    `${provider} sent ${what} that does not match its schema: ${issues}`,
    {
      details: { provider },
    },
  );
}

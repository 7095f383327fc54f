import type { DescMessage, MessageShape } from '@bufbuild/protobuf';
import { fromText } from '@bufbuild/protobuf/txtpb';
import { ErrorCode, InfergateError } from '@infergate/core';

/**
 * Parses the protobuf text format into a message of `schema`. Tokenizing and decoding are
 * protobuf-es's (`@bufbuild/protobuf/txtpb`, a port of protobuf-go's parser: comments, `[ … ]`
 * lists, `<…>` blocks, adjacent-string concatenation, every escape); this adds what a config
 * author needs: an `InfergateError(INVALID_ARGUMENT)` that names the source and, where the
 * offending word can be found, its line.
 */
export function parseTextFormat<Desc extends DescMessage>(
  schema: Desc,
  text: string,
  source = schema.typeName,
): MessageShape<Desc> {
  try {
    return fromText(schema, text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const line = lineOf(text, reason);
    const where = line === undefined ? source : `${source}:${line}`;
    throw new InfergateError(ErrorCode.InvalidArgument, `${where}: ${reason}`, { cause: error });
  }
}

/** The first line holding the quoted word of the message (`unknown field "foo"`), if any. */
function lineOf(text: string, reason: string): number | undefined {
  const word = /"([^"]+)"/.exec(reason)?.[1];
  if (word === undefined) return undefined;
  const pattern = new RegExp(
    `(^|[^A-Za-z0-9_])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^A-Za-z0-9_]|$)`,
  );
  const index = text.split('\n').findIndex((line) => pattern.test(line.replace(/#.*$/, '')));
  return index === -1 ? undefined : index + 1;
}

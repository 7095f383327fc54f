// Escapes for quoted strings in the protobuf text format. Strings keep printable Unicode as it is
// (config.pbtxt files are UTF-8); bytes print every byte outside printable ASCII as a three-digit
// octal escape, which every text-format parser (C++, Go, protobuf-es) reads back.

const NAMED: Readonly<Record<number, string>> = {
  9: '\\t',
  10: '\\n',
  13: '\\r',
  34: '\\"',
  39: "\\'",
  92: '\\\\',
};

function octal(code: number): string {
  return `\\${code.toString(8).padStart(3, '0')}`;
}

export function escapeString(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    const named = NAMED[code];
    if (named !== undefined) out += named;
    else if (code < 0x20 || code === 0x7f) out += octal(code);
    else out += char;
  }
  return out;
}

export function escapeBytes(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) {
    const named = NAMED[byte];
    if (named !== undefined) out += named;
    else if (byte < 0x20 || byte >= 0x7f) out += octal(byte);
    else out += String.fromCharCode(byte);
  }
  return out;
}

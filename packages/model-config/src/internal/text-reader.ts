// The tokenizer of the protobuf text format: punctuation, identifiers, numbers (as text), quoted
// strings (decoded to bytes: the same bytes back string and bytes fields), with the line and column
// of each token for error messages. `#` starts a comment to the end of the line.

export type Token =
  | { kind: 'punct'; text: string; line: number; column: number }
  | { kind: 'identifier'; text: string; line: number; column: number }
  | { kind: 'number'; text: string; line: number; column: number }
  | { kind: 'string'; bytes: Uint8Array; text: string; line: number; column: number }
  | { kind: 'end'; text: string; line: number; column: number };

const PUNCTUATION = new Set(['{', '}', '<', '>', '[', ']', ':', ',', ';', '-']);
const NUMBER = /^(0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fF]?)/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*/;
const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  n: 0x0a,
  t: 0x09,
  r: 0x0d,
  a: 0x07,
  b: 0x08,
  f: 0x0c,
  v: 0x0b,
  '\\': 0x5c,
  "'": 0x27,
  '"': 0x22,
  '?': 0x3f,
};

export class TextFormatError extends Error {}

export class TextReader {
  readonly #text: string;
  #offset = 0;
  #line = 1;
  #lineStart = 0;
  #peeked: Token | undefined;

  constructor(text: string) {
    this.#text = text;
  }

  peek(): Token {
    this.#peeked ??= this.#read();
    return this.#peeked;
  }

  next(): Token {
    const token = this.peek();
    this.#peeked = undefined;
    return token;
  }

  /** Consumes the punctuation `text` if it comes next. */
  accept(text: string): boolean {
    const token = this.peek();
    if (token.kind !== 'punct' || token.text !== text) return false;
    this.next();
    return true;
  }

  expect(text: string, what: string): void {
    const token = this.next();
    if (token.kind !== 'punct' || token.text !== text)
      throw this.error(token, `expected "${text}" ${what}, got ${describe(token)}`);
  }

  error(token: Token, message: string): TextFormatError {
    return new TextFormatError(`${token.line}:${token.column}: ${message}`);
  }

  #skip(): void {
    const text = this.#text;
    while (this.#offset < text.length) {
      const char = text[this.#offset];
      if (char === '\n') {
        this.#offset++;
        this.#line++;
        this.#lineStart = this.#offset;
      } else if (char === ' ' || char === '\t' || char === '\r' || char === '\f' || char === '\v') {
        this.#offset++;
      } else if (char === '#') {
        while (this.#offset < text.length && text[this.#offset] !== '\n') this.#offset++;
      } else {
        return;
      }
    }
  }

  #read(): Token {
    this.#skip();
    const line = this.#line;
    const column = this.#offset - this.#lineStart + 1;
    const rest = this.#text.slice(this.#offset, this.#offset + 512);
    const char = rest[0];
    if (char === undefined) return { kind: 'end', text: '', line, column };
    if (PUNCTUATION.has(char)) {
      this.#offset++;
      return { kind: 'punct', text: char, line, column };
    }
    if (/[0-9.]/.test(char)) {
      const number = NUMBER.exec(rest);
      if (number === null)
        throw new TextFormatError(`${line}:${column}: unexpected character ${JSON.stringify(char)}`);
      const text = this.#take(number[0]);
      const after = this.#text[this.#offset] ?? '';
      if (/[A-Za-z0-9_.]/.test(after))
        throw new TextFormatError(`${line}:${column}: a number runs into "${after}"`);
      return { kind: 'number', text, line, column };
    }
    const identifier = IDENTIFIER.exec(rest);
    if (identifier !== null) return { kind: 'identifier', text: this.#take(identifier[0]), line, column };
    if (char === '"' || char === "'")
      return { kind: 'string', ...this.#string(char, line, column), line, column };
    throw new TextFormatError(`${line}:${column}: unexpected character ${JSON.stringify(char)}`);
  }

  #take(text: string): string {
    this.#offset += text.length;
    return text;
  }

  #string(quote: string, line: number, column: number): { bytes: Uint8Array; text: string } {
    const text = this.#text;
    const bytes: number[] = [];
    const encoder = new TextEncoder();
    const start = this.#offset;
    this.#offset++;
    for (;;) {
      const char = text[this.#offset];
      if (char === undefined || char === '\n') {
        throw new TextFormatError(`${line}:${column}: a string is not closed on its line`);
      }
      if (char === quote) {
        this.#offset++;
        return { bytes: Uint8Array.from(bytes), text: text.slice(start, this.#offset) };
      }
      if (char !== '\\') {
        const codePoint = text.codePointAt(this.#offset) ?? 0;
        const whole = String.fromCodePoint(codePoint);
        bytes.push(...encoder.encode(whole));
        this.#offset += whole.length;
        continue;
      }
      const escaped = text[this.#offset + 1] ?? '';
      const simple = SIMPLE_ESCAPES[escaped];
      if (simple !== undefined) {
        bytes.push(simple);
        this.#offset += 2;
      } else if (/[0-7]/.test(escaped)) {
        const digits = /^[0-7]{1,3}/.exec(text.slice(this.#offset + 1))?.[0] ?? '';
        const value = Number.parseInt(digits, 8);
        if (value > 0xff)
          throw new TextFormatError(`${line}:${column}: octal escape \\${digits} is above \\377`);
        bytes.push(value);
        this.#offset += 1 + digits.length;
      } else if (escaped === 'x' || escaped === 'X') {
        const digits = /^[0-9a-fA-F]{1,2}/.exec(text.slice(this.#offset + 2))?.[0];
        if (digits === undefined) throw new TextFormatError(`${line}:${column}: \\x needs hex digits`);
        bytes.push(Number.parseInt(digits, 16));
        this.#offset += 2 + digits.length;
      } else if (escaped === 'u' || escaped === 'U') {
        const length = escaped === 'u' ? 4 : 8;
        const digits = text.slice(this.#offset + 2, this.#offset + 2 + length);
        const codePoint =
          /^[0-9a-fA-F]+$/.test(digits) && digits.length === length
            ? Number.parseInt(digits, 16)
            : Number.NaN;
        if (!(codePoint <= 0x10ffff) || (codePoint >= 0xd800 && codePoint <= 0xdfff)) {
          throw new TextFormatError(`${line}:${column}: \\${escaped}${digits} is not a Unicode code point`);
        }
        bytes.push(...encoder.encode(String.fromCodePoint(codePoint)));
        this.#offset += 2 + length;
      } else {
        throw new TextFormatError(`${line}:${column}: unknown escape \\${escaped}`);
      }
    }
  }
}

export function describe(token: Token): string {
  if (token.kind === 'end') return 'the end of the text';
  if (token.kind === 'string') return `the string ${token.text}`;
  return `"${token.text}"`;
}

/**
 * JSON text to values without losing big integers: OPA keeps numbers exact, so `12345678901234567890`
 * in an input or a data document must come back as written. Integers beyond 2^53 become `bigint`
 * (the Rego library takes and returns them so); everything else is what `JSON.parse` gives. Text
 * without a run of 16 or more digits takes `JSON.parse` directly.
 */

export class JsonSyntaxError extends SyntaxError {
  constructor(message: string, readonly offset: number) {
    super(`${message} at offset ${offset}`);
    this.name = 'JsonSyntaxError';
  }
}

const LONG_DIGITS = /\d{16,}/;

export function parseJson(text: string): unknown {
  if (!LONG_DIGITS.test(text)) return JSON.parse(text);
  const parser = new ExactParser(text);
  const value = parser.value();
  parser.end();
  return value;
}

class ExactParser {
  private pos = 0;

  constructor(private readonly text: string) {}

  end(): void {
    this.space();
    if (this.pos < this.text.length) throw new JsonSyntaxError('unexpected text after the JSON value', this.pos);
  }

  value(): unknown {
    this.space();
    const c = this.text[this.pos];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
    for (const [word, value] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return value;
      }
    }
    throw new JsonSyntaxError(c === undefined ? 'unexpected end of JSON input' : `unexpected character ${JSON.stringify(c)}`, this.pos);
  }

  private object(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.pos++;
    this.space();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.space();
      if (this.text[this.pos] !== '"') throw new JsonSyntaxError('expected a string key', this.pos);
      const key = this.string();
      this.space();
      this.expect(':');
      Object.defineProperty(out, key, { value: this.value(), enumerable: true, writable: true, configurable: true });
      this.space();
      if (this.text[this.pos] === ',') {
        this.pos++;
        continue;
      }
      this.expect('}');
      return out;
    }
  }

  private array(): unknown[] {
    const out: unknown[] = [];
    this.pos++;
    this.space();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.space();
      if (this.text[this.pos] === ',') {
        this.pos++;
        continue;
      }
      this.expect(']');
      return out;
    }
  }

  private string(): string {
    const start = this.pos;
    this.pos++;
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined) throw new JsonSyntaxError('unterminated string', start);
      if (c === '\\') this.pos += 2;
      else if (c === '"') break;
      else this.pos++;
    }
    this.pos++;
    return JSON.parse(this.text.slice(start, this.pos)) as string;
  }

  private number(): number | bigint {
    const m = /-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
    m.lastIndex = this.pos;
    const match = m.exec(this.text);
    if (!match) throw new JsonSyntaxError('bad number', this.pos);
    this.pos += match[0].length;
    if (match[2] === undefined && match[3] === undefined) {
      const n = Number(match[0]);
      if (!Number.isSafeInteger(n)) return BigInt(match[0]);
      return n;
    }
    return Number(match[0]);
  }

  private space(): void {
    while (this.pos < this.text.length && ' \t\n\r'.includes(this.text[this.pos]!)) this.pos++;
  }

  private expect(c: string): void {
    if (this.text[this.pos] !== c) throw new JsonSyntaxError(`expected ${JSON.stringify(c)}`, this.pos);
    this.pos++;
  }
}

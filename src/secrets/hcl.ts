/**
 * A parser for the subset of HCL that Vault's policies and server configuration use: attributes
 * (`key = value`), labelled blocks (`path "secret/*" { ... }`, `storage "sqlite" { ... }`), strings
 * with escapes, heredocs (`<<EOF`, `<<-EOF`), numbers, booleans, lists, objects, and `#`, `//`,
 * `/* *\/` comments. Errors carry the line and column.
 */
export type HclValue = string | number | boolean | null | HclValue[] | { [key: string]: HclValue };

export interface HclBlock {
  readonly type: string;
  readonly labels: readonly string[];
  readonly body: HclBody;
  readonly line: number;
}

export interface HclBody {
  readonly attributes: Record<string, HclValue>;
  readonly blocks: HclBlock[];
}

export class HclSyntaxError extends Error {
  constructor(message: string, readonly line: number, readonly column: number) {
    super(`At ${line}:${column}: ${message}`);
    this.name = 'HclSyntaxError';
  }
}

type Token =
  | { kind: 'ident'; text: string; line: number; col: number }
  | { kind: 'string'; text: string; line: number; col: number }
  | { kind: 'number'; text: string; line: number; col: number }
  | { kind: 'punct'; text: string; line: number; col: number }
  | { kind: 'eof'; text: ''; line: number; col: number };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const col = () => i - lineStart + 1;
  const fail = (message: string): never => {
    throw new HclSyntaxError(message, line, col());
  };
  while (i < source.length) {
    const c = source[i]!;
    if (c === '\n') {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\ufeff') {
      i++;
      continue;
    }
    if (c === '#' || (c === '/' && source[i + 1] === '/')) {
      while (i < source.length && source[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      if (end === -1) fail('unterminated comment');
      for (let j = i; j < end; j++) if (source[j] === '\n') (line++, (lineStart = j + 1));
      i = end + 2;
      continue;
    }
    const startLine = line;
    const startCol = col();
    if (c === '<' && source[i + 1] === '<') {
      const m = /^<<(-?)([A-Za-z_][A-Za-z0-9_]*)[ \t]*\r?\n/.exec(source.slice(i));
      if (!m) fail('invalid heredoc');
      const indent = m![1] === '-';
      const marker = m![2]!;
      i += m![0].length;
      line++;
      lineStart = i;
      const lines: string[] = [];
      for (;;) {
        if (i >= source.length) fail(`heredoc ${marker} is not terminated`);
        let end = source.indexOf('\n', i);
        if (end === -1) end = source.length;
        const text = source.slice(i, end).replace(/\r$/, '');
        i = Math.min(end + 1, source.length);
        line++;
        lineStart = i;
        if (text.trim() === marker) break;
        lines.push(text);
      }
      let body = lines;
      if (indent) {
        const widths = lines.filter((l) => l.trim() !== '').map((l) => /^[ \t]*/.exec(l)![0].length);
        const strip = widths.length ? Math.min(...widths) : 0;
        body = lines.map((l) => l.slice(strip));
      }
      tokens.push({ kind: 'string', text: body.join('\n') + (body.length ? '\n' : ''), line: startLine, col: startCol });
      continue;
    }
    if (c === '"') {
      let text = '';
      i++;
      for (;;) {
        if (i >= source.length || source[i] === '\n') fail('unterminated string');
        const ch = source[i]!;
        if (ch === '"') {
          i++;
          break;
        }
        if (ch === '\\') {
          const e = source[i + 1];
          const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\', '/': '/' };
          if (e !== undefined && simple[e] !== undefined) {
            text += simple[e];
            i += 2;
          } else if (e === 'u') {
            const hex = source.slice(i + 2, i + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('invalid unicode escape');
            text += String.fromCharCode(parseInt(hex, 16));
            i += 6;
          } else {
            fail(`invalid escape \\${e ?? ''}`);
          }
          continue;
        }
        text += ch;
        i++;
      }
      tokens.push({ kind: 'string', text, line: startLine, col: startCol });
      continue;
    }
    const num = /^-?\d+(\.\d+)?([eE][-+]?\d+)?/.exec(source.slice(i, i + 64));
    if (num && (c !== '-' || /\d/.test(source[i + 1] ?? ''))) {
      tokens.push({ kind: 'number', text: num[0], line: startLine, col: startCol });
      i += num[0].length;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_\-.]*/.exec(source.slice(i, i + 256));
    if (ident) {
      tokens.push({ kind: 'ident', text: ident[0], line: startLine, col: startCol });
      i += ident[0].length;
      continue;
    }
    if ('{}[]=,:'.includes(c)) {
      tokens.push({ kind: 'punct', text: c, line: startLine, col: startCol });
      i++;
      continue;
    }
    fail(`unexpected character ${JSON.stringify(c)}`);
  }
  tokens.push({ kind: 'eof', text: '', line, col: col() });
  return tokens;
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.pos]!;
  }
  private next(): Token {
    return this.tokens[this.pos++]!;
  }
  private fail(token: Token, message: string): never {
    throw new HclSyntaxError(message, token.line, token.col);
  }
  private isPunct(text: string): boolean {
    const t = this.peek();
    return t.kind === 'punct' && t.text === text;
  }
  private expectPunct(text: string): void {
    const t = this.next();
    if (t.kind !== 'punct' || t.text !== text) this.fail(t, `expected ${JSON.stringify(text)}, found ${describe(t)}`);
  }

  body(closing: boolean): HclBody {
    const body: HclBody = { attributes: {}, blocks: [] };
    for (;;) {
      const t = this.peek();
      if (t.kind === 'eof') {
        if (closing) this.fail(t, 'expected "}", found end of file');
        return body;
      }
      if (t.kind === 'punct' && t.text === '}') {
        if (!closing) this.fail(t, 'unexpected "}"');
        this.next();
        return body;
      }
      if (t.kind === 'punct' && t.text === ',') {
        this.next();
        continue;
      }
      if (t.kind !== 'ident' && t.kind !== 'string') this.fail(t, `expected a key, found ${describe(t)}`);
      this.next();
      if (this.isPunct('=') || this.isPunct(':')) {
        this.next();
        body.attributes[t.text] = this.value();
        continue;
      }
      const labels: string[] = [];
      while (this.peek().kind === 'string' || this.peek().kind === 'ident') labels.push(this.next().text);
      this.expectPunct('{');
      body.blocks.push({ type: t.text, labels, body: this.body(true), line: t.line });
    }
  }

  value(): HclValue {
    const t = this.next();
    switch (t.kind) {
      case 'string':
        return t.text;
      case 'number':
        return Number(t.text);
      case 'ident':
        if (t.text === 'true') return true;
        if (t.text === 'false') return false;
        if (t.text === 'null') return null;
        return this.fail(t, `unexpected ${describe(t)}`);
      case 'punct':
        if (t.text === '[') {
          const items: HclValue[] = [];
          for (;;) {
            if (this.isPunct(']')) {
              this.next();
              return items;
            }
            items.push(this.value());
            if (this.isPunct(',')) this.next();
            else if (!this.isPunct(']')) this.fail(this.peek(), `expected "," or "]", found ${describe(this.peek())}`);
          }
        }
        if (t.text === '{') return bodyToObject(this.body(true));
        return this.fail(t, `unexpected ${describe(t)}`);
      default:
        return this.fail(t, 'unexpected end of file');
    }
  }
}

function describe(t: Token): string {
  return t.kind === 'eof' ? 'end of file' : JSON.stringify(t.text);
}

/** An object from a body: attributes as keys, blocks as nested objects keyed by their labels. */
export function bodyToObject(body: HclBody): { [key: string]: HclValue } {
  const out: { [key: string]: HclValue } = { ...body.attributes };
  for (const block of body.blocks) {
    let target = out;
    const keys = [block.type, ...block.labels];
    for (const key of keys.slice(0, -1)) {
      const existing = target[key];
      if (existing === undefined || typeof existing !== 'object' || existing === null || Array.isArray(existing)) target[key] = {};
      target = target[key] as { [key: string]: HclValue };
    }
    const last = keys[keys.length - 1]!;
    const value = bodyToObject(block.body);
    const existing = target[last];
    if (existing && typeof existing === 'object' && !Array.isArray(existing)) Object.assign(existing, value);
    else target[last] = value;
  }
  return out;
}

export function parseHcl(source: string): HclBody {
  return new Parser(tokenize(source)).body(false);
}

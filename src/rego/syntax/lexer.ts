import { RegoError } from '../errors.js';

export type TokenKind = 'ident' | 'string' | 'number' | 'template' | 'punct' | 'eof';

export interface Token {
  kind: TokenKind;
  /** Identifier name, decoded string value, number text or punctuation. */
  text: string;
  row: number;
  col: number;
  offset: number;
  end: number;
  /** Whitespace or a comment precedes the token. */
  space: boolean;
  /** A line break precedes the token. */
  newline: boolean;
  /** Template strings: literal parts (even indices) and expression sources (odd indices). */
  parts?: TemplatePart[];
}

export interface TemplatePart {
  literal: boolean;
  text: string;
  offset: number;
}

export interface Comment {
  text: string;
  row: number;
  col: number;
}

const PUNCT = [':=', '==', '!=', '<=', '>=', '{', '}', '[', ']', '(', ')', '.', ',', ';', ':', '=', '<', '>', '+', '-', '*', '/', '%', '&', '|'];

/** Splits Rego source into tokens; comments are collected separately (for METADATA blocks). */
export function tokenize(source: string, file: string): { tokens: Token[]; comments: Comment[] } {
  const tokens: Token[] = [];
  const comments: Comment[] = [];
  let i = 0;
  let row = 1;
  let lineStart = 0;
  const n = source.length;
  const fail = (message: string, at: number): never => {
    throw new RegoError('rego_parse_error', message, { file, row, col: at - lineStart + 1 });
  };

  while (true) {
    let space = false;
    let newline = false;
    while (i < n) {
      const c = source.charCodeAt(i);
      if (c === 10) {
        i++;
        row++;
        lineStart = i;
        space = newline = true;
      } else if (c === 32 || c === 9 || c === 13) {
        i++;
        space = true;
      } else if (c === 35) {
        const start = i;
        while (i < n && source.charCodeAt(i) !== 10) i++;
        comments.push({ text: source.slice(start + 1, i), row, col: start - lineStart + 1 });
        space = true;
      } else break;
    }
    const start = i;
    const col = i - lineStart + 1;
    const startRow = row;
    const push = (kind: TokenKind, text: string, parts?: TemplatePart[]) =>
      tokens.push({ kind, text, row: startRow, col, offset: start, end: i, space, newline, ...(parts ? { parts } : {}) });
    if (i >= n) {
      push('eof', '');
      return { tokens, comments };
    }
    const c = source[i]!;
    if (/[A-Za-z_]/.test(c)) {
      while (i < n && /[A-Za-z0-9_]/.test(source[i]!)) i++;
      push('ident', source.slice(start, i));
    } else if (/[0-9]/.test(c)) {
      while (i < n && /[0-9]/.test(source[i]!)) i++;
      if (source[i] === '.' && /[0-9]/.test(source[i + 1] ?? '')) {
        i++;
        while (i < n && /[0-9]/.test(source[i]!)) i++;
      }
      if (source[i] === 'e' || source[i] === 'E') {
        let j = i + 1;
        if (source[j] === '+' || source[j] === '-') j++;
        if (/[0-9]/.test(source[j] ?? '')) {
          i = j;
          while (i < n && /[0-9]/.test(source[i]!)) i++;
        }
      }
      if (i < n && /[A-Za-z_]/.test(source[i]!)) fail('illegal number format', start);
      push('number', source.slice(start, i));
    } else if (c === '"') {
      i++;
      push('string', readString());
    } else if (c === '`') {
      const close = source.indexOf('`', i + 1);
      if (close < 0) fail('non-terminated raw string', start);
      const text = source.slice(i + 1, close);
      for (const ch of text) if (ch === '\n') row++;
      if (text.includes('\n')) lineStart = start + 1 + text.lastIndexOf('\n') + 1;
      i = close + 1;
      push('string', text);
    } else if (c === '$' && (source[i + 1] === '"' || source[i + 1] === '`')) {
      i += 2;
      const parts = readTemplate(source[i - 1]!);
      push('template', source.slice(start, i), parts);
    } else {
      const p = PUNCT.find((op) => source.startsWith(op, i));
      if (!p) fail(`illegal token '${c}'`, start);
      i += p!.length;
      push('punct', p!);
    }
  }

  function readString(): string {
    let out = '';
    while (true) {
      if (i >= n || source[i] === '\n') fail('non-terminated string', i);
      const ch = source[i]!;
      if (ch === '"') {
        i++;
        return out;
      }
      if (ch === '\\') {
        const e = source[i + 1];
        i += 2;
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            const hex = source.slice(i, i + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('illegal unicode escape', i);
            out += String.fromCharCode(parseInt(hex, 16));
            i += 4;
            break;
          }
          default:
            fail(`illegal escape sequence '\\${e ?? ''}'`, i - 2);
        }
      } else {
        out += ch;
        i++;
      }
    }
  }

  function readTemplate(quote: string): TemplatePart[] {
    const parts: TemplatePart[] = [];
    let literal = '';
    let litStart = i;
    while (true) {
      if (i >= n) fail('non-terminated template string', i);
      const ch = source[i]!;
      if (ch === quote) {
        i++;
        parts.push({ literal: true, text: literal, offset: litStart });
        return parts;
      }
      if (ch === '\n') {
        if (quote === '"') fail('non-terminated template string', i);
        row++;
        lineStart = i + 1;
      }
      if (ch === '\\' && quote === '"') {
        const e = source[i + 1];
        if (e === '{' || e === '}') {
          literal += e;
          i += 2;
          continue;
        }
        i++;
        literal += readEscape();
        continue;
      }
      if (ch === '{') {
        parts.push({ literal: true, text: literal, offset: litStart });
        literal = '';
        let depth = 1;
        const exprStart = ++i;
        while (i < n && depth > 0) {
          const d = source[i]!;
          if (d === '{') depth++;
          else if (d === '}') depth--;
          else if (d === '"') {
            i++;
            readString();
            continue;
          }
          i++;
        }
        if (depth > 0) fail('non-terminated template expression', exprStart);
        parts.push({ literal: false, text: source.slice(exprStart, i - 1), offset: exprStart });
        litStart = i;
        continue;
      }
      literal += ch;
      i++;
    }
  }

  /** An escape in a template string; `i` is just past the backslash. */
  function readEscape(): string {
    const save = i;
    i--;
    const e = source[i + 1];
    const map: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
    if (e && e in map) {
      i += 2;
      return map[e]!;
    }
    if (e === 'u') {
      const hex = source.slice(i + 2, i + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('illegal unicode escape', i);
      i += 6;
      return String.fromCharCode(parseInt(hex, 16));
    }
    return fail(`illegal escape sequence`, save);
  }
}

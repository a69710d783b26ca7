/**
 * What every backend shares about keys, values, pages and transactions: the checks on arguments
 * (one message for one mistake on every backend), the key order, and the opaque continue token.
 */
import { InvalidArgumentError, type KeyValue, type ListOptions, type Transaction, type WriteOptions } from './types.js';

/** Keys longer than this are refused: etcd's default request limit is 1.5 MiB, and keys are names, not data. */
export const MAX_KEY_BYTES = 8 * 1024;

/** In a `u` regex a paired surrogate is one code point, so this matches only unpaired halves. */
const LONE_SURROGATE = /\p{Surrogate}/u;

export function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidArgumentError('a key must be a non-empty string');
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw new InvalidArgumentError(`a key must be at most ${MAX_KEY_BYTES} bytes`);
  if (LONE_SURROGATE.test(key)) throw new InvalidArgumentError(`key ${JSON.stringify(key)} is not well-formed Unicode`);
}

export function checkPrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string') throw new InvalidArgumentError('a prefix must be a string');
  if (LONE_SURROGATE.test(prefix)) throw new InvalidArgumentError(`prefix ${JSON.stringify(prefix)} is not well-formed Unicode`);
}

export function checkValue(value: unknown): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) throw new InvalidArgumentError('a value must be a Uint8Array');
}

export function checkRevision(name: string, revision: unknown, minimum: number): asserts revision is number {
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < minimum) {
    throw new InvalidArgumentError(`${name} must be an integer of at least ${minimum}, not ${String(revision)}`);
  }
}

export function checkWriteOptions(options: WriteOptions | undefined): void {
  if (options?.expectedRevision !== undefined) checkRevision('expectedRevision', options.expectedRevision, 0);
}

export function checkTransaction(transaction: Transaction): void {
  if (!transaction || !Array.isArray(transaction.operations)) throw new InvalidArgumentError('a transaction needs an operations array');
  for (const condition of transaction.compare ?? []) {
    checkKey(condition.key);
    checkRevision('a condition modRevision', condition.modRevision, 0);
  }
  const seen = new Set<string>();
  for (const operation of transaction.operations) {
    if (operation.type !== 'put' && operation.type !== 'delete') {
      throw new InvalidArgumentError(`unknown operation type ${JSON.stringify((operation as { type: unknown }).type)}`);
    }
    checkKey(operation.key);
    if (operation.type === 'put') checkValue(operation.value);
    // etcd refuses a transaction that writes one key twice; refusing it everywhere keeps the backends alike.
    if (seen.has(operation.key)) throw new InvalidArgumentError(`a transaction writes ${JSON.stringify(operation.key)} more than once`);
    seen.add(operation.key);
  }
}

/**
 * Keys sort by their UTF-8 bytes (etcd's and SQLite's order). JavaScript compares UTF-16 code units,
 * which differs only where a surrogate (U+10000 and above) meets U+E000–U+FFFF: shift those apart.
 */
export function compareKeys(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

function utf8Rank(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

/** The smallest byte string greater than every key that starts with `prefix`; undefined: no upper bound. */
export function prefixEnd(prefix: Uint8Array): Uint8Array | undefined {
  const end = Uint8Array.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return undefined;
}

/** Where a page starts: the list's revision and the first key to read (inclusive). */
export interface PagePosition {
  readonly revision: number;
  readonly start: string;
}

export interface ListPlan {
  /** The revision to read at, or undefined for "the current one". */
  readonly revision?: number;
  /** The first key to read (inclusive): the prefix itself, or where the previous page ended. */
  readonly start: string;
  /** 0: no limit. */
  readonly limit: number;
}

/** Checks list options and resolves a continue token into the revision and key to resume at. */
export function planList(prefix: string, options: ListOptions | undefined): ListPlan {
  checkPrefix(prefix);
  const limit = options?.limit ?? 0;
  if (!Number.isSafeInteger(limit) || limit < 0) throw new InvalidArgumentError(`limit must be a non-negative integer, not ${String(limit)}`);
  if (options?.continue !== undefined) {
    const position = decodeContinue(options.continue);
    if (!position.start.startsWith(prefix)) throw new InvalidArgumentError('the continue token belongs to a list of another prefix');
    if (options.revision !== undefined && options.revision !== position.revision) {
      throw new InvalidArgumentError('a continue token and a different revision cannot be combined');
    }
    return { revision: position.revision, start: position.start, limit };
  }
  if (options?.revision !== undefined) checkRevision('revision', options.revision, 1);
  return { revision: options?.revision, start: prefix, limit };
}

/** The token for the page after one whose last key is `lastKey`: the next key is lastKey + "\0". */
export function encodeContinue(revision: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 1, rev: revision, start: `${lastKey}\u0000` }), 'utf8').toString('base64url');
}

export function decodeContinue(token: string): PagePosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(String(token), 'base64url').toString('utf8'));
  } catch {
    throw new InvalidArgumentError('the continue token is not one this store issued');
  }
  const { v, rev, start } = (parsed ?? {}) as { v?: unknown; rev?: unknown; start?: unknown };
  if (v !== 1 || typeof rev !== 'number' || !Number.isSafeInteger(rev) || rev < 1 || typeof start !== 'string' || start.length === 0) {
    throw new InvalidArgumentError('the continue token is not one this store issued');
  }
  return { revision: rev, start };
}

/** The tombstone a delete event carries: etcd's shape (no value, create revision and version 0). */
export function tombstone(key: string, revision: number): KeyValue {
  return { key, value: new Uint8Array(0), createRevision: 0, modRevision: revision, version: 0 };
}

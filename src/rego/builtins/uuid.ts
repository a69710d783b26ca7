import { randomUUID } from 'node:crypto';
import { num, type Value } from '../value/index.js';
import { defineBuiltins } from './registry.js';
import { record, str } from './operands.js';
import { T } from './types.js';

/** 100-ns intervals between the Gregorian reform (UUID epoch) and the Unix epoch. */
const GREGORIAN_OFFSET = 0x01b21dd213814000n;

/** The 16 bytes of a UUID in any form Go's uuid.Parse accepts, or undefined. */
function uuidBytes(s: string): Buffer | undefined {
  let hex: string;
  if (s.length === 36) hex = s;
  else if (s.length === 38 && s[0] === '{' && s[37] === '}') hex = s.slice(1, 37);
  else if (s.length === 45 && s.toLowerCase().startsWith('urn:uuid:')) hex = s.slice(9);
  else if (s.length === 32 && /^[0-9a-fA-F]{32}$/.test(s)) return Buffer.from(s, 'hex');
  else return undefined;
  if (!/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(hex)) return undefined;
  return Buffer.from(hex.replaceAll('-', ''), 'hex');
}

function variantName(b: number): string {
  if ((b & 0xc0) === 0x80) return 'RFC4122';
  if ((b & 0xe0) === 0xc0) return 'Microsoft';
  if ((b & 0xe0) === 0xe0) return 'Future';
  return 'Reserved';
}

function unixNanos(t100ns: bigint): Value {
  return num.fromBigInt((t100ns - GREGORIAN_OFFSET) * 100n);
}

function parseUUID(s: string): Value | undefined {
  const b = uuidBytes(s);
  if (!b) return undefined;
  const version = b[6]! >> 4;
  const fields: Record<string, Value> = { version, variant: variantName(b[8]!) };
  if (version === 1 || version === 2) {
    const t =
      BigInt(b.readUInt32BE(0)) | (BigInt(b.readUInt16BE(4)) << 32n) | (BigInt(b.readUInt16BE(6) & 0x0fff) << 48n);
    fields.time = unixNanos(t);
    fields.nodeid = [...b.subarray(10, 16)].map((x) => x.toString(16).padStart(2, '0')).join('-');
    fields.macvariables = `${b[10]! & 0x02 ? 'local' : 'global'}:${b[10]! & 0x01 ? 'multicast' : 'unicast'}`;
    fields.clocksequence = b.readUInt16BE(8) & 0x3fff;
    if (version === 2) {
      fields.id = b.readUInt32BE(0);
      fields.domain = ['Person', 'Group', 'Org'][b[9]!] ?? `Domain${b[9]}`;
    }
  } else if (version === 6) {
    const t =
      (BigInt(b.readUInt32BE(0)) << 28n) | (BigInt(b.readUInt16BE(4)) << 12n) | BigInt(b.readUInt16BE(6) & 0x0fff);
    fields.time = unixNanos(t);
  } else if (version === 7) {
    const ms = b.readBigUInt64BE(0) >> 16n;
    fields.time = num.fromBigInt(ms * 1_000_000n);
  }
  return record(fields);
}

export const uuids = defineBuiltins(
  {
    name: 'uuid.rfc4122',
    nondeterministic: true,
    decl: T.fn([T.string], T.string),
    impl: ([k], ctx) => {
      const key = `uuid.rfc4122\u0000${str(k!)}`;
      let id = ctx.cache.get(key) as string | undefined;
      if (id === undefined) {
        id = randomUUID();
        ctx.cache.set(key, id);
      }
      return id;
    },
  },
  { name: 'uuid.parse', decl: T.fn([T.string], T.objectOf(T.string, T.any)), impl: ([s]) => parseUUID(str(s!)) },
);

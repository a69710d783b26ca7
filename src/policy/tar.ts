/**
 * A reader for the tar archives inside bundle `.tar.gz` files: regular files only, with ustar
 * prefixes, PAX `path` records and GNU long names. Directories, links and devices are skipped.
 */
import { gunzipSync } from 'node:zlib';

export interface TarEntry {
  readonly name: string;
  readonly content: Buffer;
}

export class TarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TarError';
  }
}

const BLOCK = 512;

export function readTarGz(archive: Buffer, maxBytes = 1024 * 1024 * 1024): TarEntry[] {
  let tar: Buffer;
  try {
    tar = gunzipSync(archive, { maxOutputLength: maxBytes });
  } catch (error) {
    throw new TarError(`not a gzip archive: ${(error as Error).message}`);
  }
  return readTar(tar);
}

export function readTar(tar: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let offset = 0;
  let longName: string | undefined;
  let paxPath: string | undefined;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) break;
    const size = parseOctal(header.subarray(124, 136));
    const type = String.fromCharCode(header[156] ?? 0);
    const dataStart = offset + BLOCK;
    if (dataStart + size > tar.length) throw new TarError('truncated tar archive');
    const content = tar.subarray(dataStart, dataStart + size);
    offset = dataStart + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'L') {
      longName = cString(content);
      continue;
    }
    if (type === 'x') {
      paxPath = paxRecord(content, 'path') ?? paxPath;
      continue;
    }
    if (type === 'g') continue;
    const magic = header.subarray(257, 262).toString('latin1');
    const prefix = magic === 'ustar' ? cString(header.subarray(345, 500)) : '';
    const name = paxPath ?? longName ?? (prefix ? `${prefix}/${cString(header.subarray(0, 100))}` : cString(header.subarray(0, 100)));
    longName = paxPath = undefined;
    if (type === '0' || type === '\0' || type === '7') entries.push({ name, content: Buffer.from(content) });
  }
  return entries;
}

function parseOctal(field: Buffer): number {
  const text = cString(field).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new TarError(`bad size field ${JSON.stringify(text)} in tar header`);
  return parseInt(text, 8);
}

function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString('utf8');
}

function paxRecord(content: Buffer, key: string): string | undefined {
  let offset = 0;
  while (offset < content.length) {
    const space = content.indexOf(0x20, offset);
    if (space === -1) break;
    const length = Number(content.subarray(offset, space).toString('latin1'));
    if (!Number.isInteger(length) || length <= 0) break;
    const record = content.subarray(space + 1, offset + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (record.slice(0, eq) === key) return record.slice(eq + 1);
    offset += length;
  }
  return undefined;
}

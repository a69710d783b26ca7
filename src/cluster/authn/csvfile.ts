/**
 * The CSV files of `--token-auth-file` and `--basic-auth-file` (kube.md §1): Go encoding/csv rules
 * (any number of fields per record, RFC 4180 quoting, blank lines skipped), at least three
 * columns `secret,user,uid`, an optional fourth column of comma-separated groups (one quoted field).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { StartupError } from '../../common/errors.js';

export interface CsvRecord {
  /** 1-based line of the record's first character. */
  readonly line: number;
  readonly fields: readonly string[];
}

export function readCsvRecords(path: string, flag: string): CsvRecord[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new StartupError(`${flag}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { cause: error });
  }
  try {
    const rows = parse(text, { relax_column_count: true, skip_empty_lines: true, info: true, bom: true }) as unknown as { record: string[]; info: { lines: number } }[];
    // info.lines is the line where the record ended; a record spanning lines starts earlier.
    return rows.map(({ record, info }) => ({ line: info.lines - (record.join(',').split('\n').length - 1), fields: record }));
  } catch (error) {
    const line = (error as { lines?: number }).lines;
    throw new StartupError(`${flag}: ${path}${line ? ` line ${line}` : ''}: ${(error as Error).message}`, { cause: error });
  }
}

/** The fourth column split as upstream does (`strings.Split(record[3], ",")`). */
export const groupsColumn = (fields: readonly string[]): string[] => (fields.length >= 4 ? fields[3]!.split(',') : []);

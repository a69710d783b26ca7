/** Table cells shared by several kinds (upstream printers). */
import type { KubeObject } from '../object.js';
import type { TableColumn } from './types.js';

/** Upstream's HumanDuration: `5s`, `3m20s`, `2d3h`, `400d`, `3y20d`. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const years = Math.floor(hours / 24 / 365);
  if (years < 8) return `${years}y${Math.floor(hours / 24) % 365}d`;
  return `${years}y`;
}

export function age(object: KubeObject): string {
  const created = object.metadata.creationTimestamp;
  return created ? humanDuration(Date.now() - Date.parse(created)) : '<unknown>';
}

export const AGE: TableColumn = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
  cell: age,
};

export const CREATED_AT: TableColumn = {
  name: 'Created At',
  type: 'date',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
  cell: (object) => object.metadata.creationTimestamp ?? '',
};

export function count(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  if (value && typeof value === 'object') return Object.keys(value).length;
  return 0;
}

/**
 * Loading what `opa run` is given on the command line: policy files (`.rego`, id = the path as
 * given), data files (`.json`, `.yaml`, `.yml`, merged at their directory's path below the
 * argument, or below `a.b` for the `a.b:path` form), directories of both, and with `-b` bundles
 * (a directory or a `.tar.gz` with an optional `.manifest` naming its revision and roots).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { StartupError } from '../common/errors.js';
import { isObject, type Json, type JsonObject } from './data-tree.js';
import { parseJson } from './json.js';
import type { LoadedBundleState, ModuleSourceRecord } from './store.js';
import { readTarGz, TarError, type TarEntry } from './tar.js';

export interface LoadedFiles {
  readonly modules: ModuleSourceRecord[];
  readonly data: { path: string[]; value: Json }[];
  readonly bundles: LoadedBundleState[];
}

export interface LoadOptions {
  readonly bundleMode: boolean;
  /** Glob patterns (`*`, `?`) matched against each file and directory name. */
  readonly ignore: readonly string[];
}

/** Read every argument; throws StartupError naming the file at fault. */
export async function loadPaths(args: readonly string[], options: LoadOptions): Promise<LoadedFiles> {
  const result: LoadedFiles = { modules: [], data: [], bundles: [] };
  const ignore = options.ignore.map(globToRegExp);
  for (const arg of args) {
    const { prefix, file } = splitPrefix(arg);
    if (options.bundleMode) {
      result.bundles.push(await loadBundle(file));
      continue;
    }
    const info = await stat(file).catch(() => {
      throw new StartupError(`${file}: no such file or directory`);
    });
    if (info.isDirectory()) await walk(file, [], prefix, ignore, result);
    else await loadFile(file, prefix, result, true);
  }
  return result;
}

/** `a.b:file.json` → prefix ['a','b']; a plain path has none. */
export function splitPrefix(arg: string): { prefix: string[]; file: string } {
  const colon = arg.indexOf(':');
  if (colon <= 0 || arg.slice(0, colon).includes('/')) return { prefix: [], file: arg };
  return { prefix: arg.slice(0, colon).split('.').filter(Boolean), file: arg.slice(colon + 1) };
}

async function walk(dir: string, relative: string[], prefix: string[], ignore: RegExp[], out: LoadedFiles): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (ignore.some((re) => re.test(entry.name))) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await walk(full, [...relative, entry.name], prefix, ignore, out);
    else if (entry.isFile()) await loadFile(full, [...prefix, ...relative], out, false);
  }
}

async function loadFile(file: string, dataPath: string[], out: LoadedFiles, explicit: boolean): Promise<void> {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.rego') {
    out.modules.push({ id: file, raw: await readFile(file, 'utf8') });
  } else if (ext === '.json' || ext === '.yaml' || ext === '.yml') {
    const value = parseDataFile(await readFile(file, 'utf8'), ext !== '.json', file);
    out.data.push({ path: dataPath, value });
  } else if (explicit) {
    throw new StartupError(`${file}: not a .rego, .json or .yaml file`);
  }
}

function parseDataFile(text: string, yaml: boolean, file: string): Json {
  try {
    return (yaml ? parseYaml(text) : parseJson(text)) as Json;
  } catch (error) {
    throw new StartupError(`${file}: ${(error as Error).message.split('\n')[0]}`);
  }
}

/** A bundle directory or `.tar.gz`: modules keyed `<bundle>/<path inside>`, data at its directory path. */
export async function loadBundle(location: string): Promise<LoadedBundleState> {
  const info = await stat(location).catch(() => {
    throw new StartupError(`${location}: no such file or directory`);
  });
  let files: TarEntry[];
  if (info.isDirectory()) {
    files = [];
    await collect(location, '', files);
  } else {
    try {
      files = readTarGz(await readFile(location));
    } catch (error) {
      if (error instanceof TarError) throw new StartupError(`bundle ${location}: ${error.message}`);
      throw error;
    }
  }
  const name = location;
  let revision = '';
  let roots: string[] = [''];
  const modules: ModuleSourceRecord[] = [];
  let data: JsonObject = {};
  for (const { name: entryName, content } of files) {
    const inside = entryName.replace(/^\.?\/+/, '');
    const parts = inside.split('/');
    const base = parts[parts.length - 1]!;
    if (base === '.manifest') {
      const manifest = parseDataFile(content.toString('utf8'), false, `${location}/.manifest`) as { revision?: unknown; roots?: unknown };
      if (typeof manifest?.revision === 'string') revision = manifest.revision;
      if (Array.isArray(manifest?.roots)) roots = manifest.roots.map((r) => String(r).replace(/^\/+|\/+$/g, ''));
    } else if (base.endsWith('.rego')) {
      modules.push({ id: `${name}/${inside}`, raw: content.toString('utf8') });
    } else if (base === 'data.json' || base === 'data.yaml' || base === 'data.yml') {
      const value = parseDataFile(content.toString('utf8'), !base.endsWith('.json'), `${location}/${inside}`);
      data = mergeValue(data, parts.slice(0, -1), value);
    }
  }
  return { name, revision, roots, modules, data };
}

async function collect(dir: string, relative: string, out: TarEntry[]): Promise<void> {
  for (const entry of await readdir(path.join(dir, relative), { withFileTypes: true })) {
    const rel = relative ? `${relative}/${entry.name}` : entry.name;
    if (entry.isDirectory()) await collect(dir, rel, out);
    else if (entry.isFile()) out.push({ name: rel, content: await readFile(path.join(dir, rel)) });
  }
}

function mergeValue(target: JsonObject, at: readonly string[], value: Json): JsonObject {
  if (at.length === 0) return isObject(value) ? merge(target, value) : target;
  const [head, ...rest] = at as [string, ...string[]];
  const child = isObject(target[head]) ? (target[head] as JsonObject) : {};
  return { ...target, [head]: rest.length === 0 && !isObject(value) ? value : mergeValue(child, rest, value) };
}

function merge(a: JsonObject, b: JsonObject): JsonObject {
  const out: JsonObject = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isObject(out[k]) && isObject(v) ? merge(out[k] as JsonObject, v) : v;
  return out;
}

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/**
 * Keeping what the API changed across restarts (used by `portcullis up`): one file per policy under
 * `<dir>/policies/` (the id URI-encoded, `.rego` appended) and the base documents in
 * `<dir>/data.json`. Every file is written to a temporary name and renamed, so a crash leaves
 * either the old or the new version, never a torn file.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { StartupError } from '../common/errors.js';
import { isObject, type JsonObject } from './data-tree.js';
import { parseJson } from './json.js';
import { toJson } from './requests.js';
import type { ModuleSourceRecord, StoreJournal } from './store.js';

export class FileJournal implements StoreJournal {
  private constructor(private readonly dir: string) {}

  /** Open (creating) the directory and read what an earlier run kept there. */
  static async open(dir: string): Promise<{ journal: FileJournal; policies: ModuleSourceRecord[]; data: JsonObject }> {
    const policyDir = path.join(dir, 'policies');
    await mkdir(policyDir, { recursive: true, mode: 0o700 });
    const policies: ModuleSourceRecord[] = [];
    for (const name of (await readdir(policyDir)).sort()) {
      if (!name.endsWith('.rego')) continue;
      policies.push({ id: decodeURIComponent(name.slice(0, -'.rego'.length)), raw: await readFile(path.join(policyDir, name), 'utf8') });
    }
    let data: JsonObject = {};
    const dataFile = path.join(dir, 'data.json');
    const text = await readFile(dataFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (text !== undefined) {
      let parsed: unknown;
      try {
        parsed = parseJson(text);
      } catch {
        throw new StartupError(`${dataFile}: not valid JSON; move it aside to start with empty data`);
      }
      if (!isObject(parsed)) throw new StartupError(`${dataFile}: want a JSON object`);
      data = parsed;
    }
    return { journal: new FileJournal(dir), policies, data };
  }

  async putPolicy(id: string, raw: string): Promise<void> {
    await atomicWrite(this.policyFile(id), raw);
  }

  async deletePolicy(id: string): Promise<void> {
    await rm(this.policyFile(id), { force: true });
  }

  async putData(data: JsonObject): Promise<void> {
    await atomicWrite(path.join(this.dir, 'data.json'), toJson(data, false));
  }

  private policyFile(id: string): string {
    return path.join(this.dir, 'policies', `${encodeURIComponent(id)}.rego`);
  }
}

let sequence = 0;

async function atomicWrite(file: string, content: string): Promise<void> {
  const temp = `${file}.${process.pid}.${++sequence}.tmp`;
  await writeFile(temp, content, { mode: 0o600 });
  await rename(temp, file);
}

import fsp from 'node:fs/promises';
import path from 'node:path';
import type { JobRow } from './jobs.repository.ts';

/**
 * A scratch folder for one attempt of one job, under `root`. Folders left by earlier attempts of
 * the same job (a worker that died) are removed first; `dispose()` removes this one.
 */
export async function jobWorkDir(root: string, job: JobRow): Promise<{ dir: string; dispose(): Promise<void> }> {
  await fsp.mkdir(root, { recursive: true });
  const prefix = `job-${job.id}-`;
  for (const entry of await fsp.readdir(root).catch(() => [] as string[])) {
    if (entry.startsWith(prefix)) await fsp.rm(path.join(root, entry), { recursive: true, force: true });
  }
  const dir = path.join(root, `${prefix}${job.attempts}`);
  await fsp.mkdir(dir, { recursive: true });
  return { dir, dispose: () => fsp.rm(dir, { recursive: true, force: true }) };
}

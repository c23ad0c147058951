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

/**
 * Removes the scratch folders under `root` of jobs that no worker runs now: those of a worker that died
 * (its job finished elsewhere, or was given up), which only another attempt of the same job on this
 * machine would otherwise remove. Run when a worker starts; folders of running jobs stay.
 */
export async function sweepWorkDirs(root: string, runningAmong: (ids: number[]) => Promise<Set<number>>): Promise<number> {
  const entries = (await fsp.readdir(root).catch(() => [] as string[])).flatMap((entry) => {
    const match = /^job-(\d+)-\d+$/.exec(entry);
    return match ? [{ entry, id: Number(match[1]) }] : [];
  });
  const running = await runningAmong([...new Set(entries.map((e) => e.id))]);
  let removed = 0;
  for (const { entry, id } of entries) {
    if (running.has(id)) continue;
    await fsp.rm(path.join(root, entry), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

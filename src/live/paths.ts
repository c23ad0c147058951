import fs from 'node:fs/promises';
import path from 'node:path';
import { parseMediaPlaylist, type PartPlaylist } from './hls-playlist.ts';

/** Where a broadcast's HLS output lives: DATA_DIR/live/<player uuid>/p0001/… */
export function liveDir(dataDir: string, playerUuid: string): string {
  return path.join(dataDir, 'live', playerUuid);
}

export const PART_NAME = /^p\d{4,}$/;
export const SEGMENT_NAME = /^s\d{5,}\.ts$/;
export const partName = (n: number) => `p${String(n).padStart(4, '0')}`;

/** The parts written so far, in order. */
export async function listParts(dir: string): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).filter((n) => PART_NAME.test(n)).sort();
  } catch {
    return [];
  }
}

/** Every part's playlist (parts without one yet have no segments). */
export async function readParts(dir: string): Promise<PartPlaylist[]> {
  const names = await listParts(dir);
  return Promise.all(
    names.map(async (name) => {
      try {
        const text = await fs.readFile(path.join(dir, name, 'index.m3u8'), 'utf8');
        return { name, ...parseMediaPlaylist(text) };
      } catch {
        return { name, segments: [], ended: false };
      }
    }),
  );
}

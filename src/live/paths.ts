import path from 'node:path';

/**
 * Where a broadcast's HLS output lives. Published: in the file store under `live/<player uuid>/`
 * (`p0001/s00000.ts`, …, and each part's `index.json`), where every process sharing the store serves
 * it. While a part is being packaged: the ingest's local work folder, `<media work dir>/live/<player uuid>/p0001/`,
 * which ffmpeg writes and the publisher empties.
 */
export const PART_NAME = /^p\d{4,}$/;
export const SEGMENT_NAME = /^s\d{5,}\.ts$/;
export const partName = (n: number) => `p${String(n).padStart(4, '0')}`;

/** The store prefix of a broadcast's output (every part under it). */
export const liveKey = (playerUuid: string) => `live/${playerUuid}`;
/** The store key of a part's published index: its segments (in order) and whether it ended. */
export const partIndexKey = (playerUuid: string, part: string) => `live/${playerUuid}/${part}/index.json`;
export const segmentKey = (playerUuid: string, part: string, segment: string) => `live/${playerUuid}/${part}/${segment}`;

/** The packager's local folder of a broadcast (its parts' folders inside), under the media work dir. */
export function localLiveDir(workDir: string, playerUuid: string): string {
  return path.join(workDir, 'live', playerUuid);
}

/** Where versions before the file store kept the output (DATA_DIR/live/<player uuid>): only ever removed. */
export function legacyLiveDir(dataDir: string, playerUuid: string): string {
  return path.join(dataDir, 'live', playerUuid);
}

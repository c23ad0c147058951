import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ffmpeg } from '../media/ffmpeg.ts';
import type { FileStore } from '../media/file-store.ts';
import { readParts } from './hls-index.ts';
import { segmentKey } from './paths.ts';

export interface RecordingOptions {
  ffmpegPath: string;
  store: FileStore;
  playerUuid: string;
  /** A scratch folder (under the media work dir): the segments are downloaded into it, and removed. */
  workDir: string;
  output: string;
  signal?: AbortSignal;
}

/** Downloads at a time from the store. */
const PARALLEL = 4;

/**
 * Joins a broadcast's HLS segments (every published part, in order) into one MP4: a remux
 * (`-c copy`), so the recording has exactly the publisher's picture and sound. The segments are read
 * from the file store (the broadcast may have been received by another process). Returns the number
 * of segments used; 0 (and no file) when nothing was recorded.
 */
export async function buildRecording({ ffmpegPath, store, playerUuid, workDir, output, signal }: RecordingOptions): Promise<number> {
  const parts = await readParts(store, playerUuid);
  const wanted = parts.flatMap((part) => part.segments.map((s) => ({ key: segmentKey(playerUuid, part.name, s.uri), file: `${part.name}-${s.uri}` })));
  if (wanted.length === 0) return 0;
  const dir = await fsp.mkdtemp(path.join(workDir, 'segments-'));
  try {
    const present: boolean[] = new Array<boolean>(wanted.length).fill(false);
    let next = 0;
    let failure: { error: unknown } | null = null;
    const download = async () => {
      while (next < wanted.length && !failure) {
        const i = next++;
        const file = path.join(dir, wanted[i].file);
        try {
          signal?.throwIfAborted();
          await pipeline(await store.createReadStream(wanted[i].key), fs.createWriteStream(file), { signal });
          present[i] = (await fsp.stat(file)).size > 0;
        } catch (err) {
          // Listed but gone (cannot happen while the output is kept): left out, as an empty one is.
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') failure ??= { error: err };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, wanted.length) }, download));
    if (failure) throw (failure as { error: unknown }).error;
    const files = wanted.filter((_, i) => present[i]).map((w) => path.join(dir, w.file));
    if (files.length === 0) return 0;
    const list = path.join(dir, 'list.txt');
    await fsp.writeFile(list, files.map((f) => `file '${f.replace(/'/g, "'\\''")}'`).join('\n') + '\n');
    await ffmpeg(ffmpegPath, ['-f', 'concat', '-safe', '0', '-i', list, '-map', '0', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', output], {
      signal,
      timeoutMs: 30 * 60_000,
    });
    return files.length;
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

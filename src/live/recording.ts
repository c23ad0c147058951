import fsp from 'node:fs/promises';
import path from 'node:path';
import { ffmpeg } from '../media/ffmpeg.ts';
import { readParts } from './paths.ts';

/**
 * Joins a broadcast's HLS segments (every part, in order) into one MP4: a remux (`-c copy`), so the
 * recording has exactly the publisher's picture and sound. Returns the number of segments used;
 * 0 (and no file) when nothing was recorded.
 */
export async function buildRecording(ffmpegPath: string, liveDirectory: string, output: string, signal?: AbortSignal): Promise<number> {
  const parts = await readParts(liveDirectory);
  const files: string[] = [];
  for (const part of parts) {
    for (const s of part.segments) {
      if (!/^s\d+\.ts$/.test(s.uri)) continue;
      const file = path.join(liveDirectory, part.name, s.uri);
      const stat = await fsp.stat(file).catch(() => null);
      if (stat?.isFile() && stat.size > 0) files.push(file);
    }
  }
  if (files.length === 0) return 0;
  const list = `${output}.txt`;
  await fsp.writeFile(list, files.map((f) => `file '${f.replace(/'/g, "'\\''")}'`).join('\n') + '\n');
  try {
    await ffmpeg(ffmpegPath, ['-f', 'concat', '-safe', '0', '-i', list, '-map', '0', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', output], {
      signal,
      timeoutMs: 30 * 60_000,
    });
  } finally {
    await fsp.rm(list, { force: true });
  }
  return files.length;
}

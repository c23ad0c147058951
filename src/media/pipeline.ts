import type { FileStore } from './file-store.ts';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { ffmpeg, probe, ToolError, type ProbeResult } from './ffmpeg.ts';
import { RENDITIONS, renditionSize, thumbnailArgs, thumbnailTimes, transcodeArgs, type Rendition } from './presets.ts';

export interface PipelineOptions {
  ffmpegPath: string;
  ffprobePath: string;
  /** The downloaded source. */
  source: string;
  /** A folder of this run's own, where outputs are written. */
  workDir: string;
  audioGainDb?: number;
  signal?: AbortSignal;
}

export interface RenditionFile {
  quality: Rendition['quality'];
  file: string;
  width: number;
  height: number;
  bytes: number;
}

export interface ThumbnailFile {
  file: string;
  millisecond: number;
  width: number;
  height: number;
}

export interface PipelineResult {
  probe: ProbeResult;
  renditions: RenditionFile[];
  thumbnails: ThumbnailFile[];
}

export interface TranscodeCommand {
  rendition: Rendition;
  size: { width: number; height: number };
  output: string;
  /** ffmpeg arguments (after the common flags of `ffmpeg()`). */
  args: string[];
}

/**
 * The ffmpeg commands that make a probed source's renditions, one per rendition. The largest one
 * also writes the thumbnails (`thumbnail-<n>.jpg` in `workDir`, at `thumbnailTimes`) from the frames
 * it decodes anyway. The bench runs exactly these commands as its baseline.
 */
export function transcodeCommands(info: ProbeResult, source: string, workDir: string, audioGainDb?: number): TranscodeCommand[] {
  return RENDITIONS.map((rendition, i) => {
    const size = renditionSize(info, rendition.short);
    const output = path.join(workDir, `${rendition.quality}.mp4`);
    const thumbnails = i === RENDITIONS.length - 1 ? { times: thumbnailTimes(info.duration), pattern: path.join(workDir, 'thumbnail-%d.jpg') } : undefined;
    return { rendition, size, output, args: transcodeArgs({ input: source, output, size, rendition, hasAudio: info.hasAudio, audioGainDb, thumbnails }) };
  });
}

/**
 * Source → probe → sd and hd MP4 (+ thumbnails) in `workDir`. Throws NotAVideoError for a source that
 * is not a video and ToolError when ffmpeg fails; the job's signal kills ffmpeg.
 */
export async function processSource(o: PipelineOptions): Promise<PipelineResult> {
  const info = await probe(o.ffprobePath, o.source, { signal: o.signal });
  const renditions: RenditionFile[] = [];
  const commands = transcodeCommands(info, o.source, o.workDir, o.audioGainDb);
  for (const c of commands) {
    await ffmpeg(o.ffmpegPath, c.args, { signal: o.signal });
    renditions.push({ quality: c.rendition.quality, file: c.output, ...c.size, bytes: (await fsp.stat(c.output)).size });
  }
  const size = commands[commands.length - 1].size;
  const times = thumbnailTimes(info.duration);
  let thumbnails = await existing(
    times.map((seconds, i) => ({ file: path.join(o.workDir, `thumbnail-${i}.jpg`), millisecond: Math.round(seconds * 1000), ...size })),
  );
  if (thumbnails.length === 0) {
    // Very short or odd sources can yield no frame at those times: take one at the start.
    const file = path.join(o.workDir, 'thumbnail-0.jpg');
    try {
      await ffmpeg(o.ffmpegPath, thumbnailArgs(o.source, [{ seconds: 0, output: file }], size), { signal: o.signal });
    } catch (err) {
      // Thumbnails are a nicety: a video whose renditions exist is ready without them.
      if (!(err instanceof ToolError) || o.signal?.aborted) throw err;
    }
    thumbnails = await existing([{ file, millisecond: 0, ...size }]);
  }
  return { probe: info, renditions, thumbnails };
}

async function existing(shots: ThumbnailFile[]): Promise<ThumbnailFile[]> {
  const found: ThumbnailFile[] = [];
  for (const shot of shots) {
    const stat = await fsp.stat(shot.file).catch(() => null);
    if (stat && stat.size > 0) found.push(shot);
  }
  return found;
}

/** Puts a processing result's renditions and thumbnails into the store under `folder`; answers their keys. */
export async function storeResult(store: FileStore, folder: string, result: PipelineResult): Promise<{ renditions: string[]; thumbnails: string[] }> {
  const keys = { renditions: [] as string[], thumbnails: [] as string[] };
  for (const r of result.renditions) {
    const key = `${folder}/${r.quality}.mp4`;
    await store.put(key, r.file);
    keys.renditions.push(key);
  }
  for (const [i, t] of result.thumbnails.entries()) {
    const key = `${folder}/thumbnail-${i}.jpg`;
    await store.put(key, t.file);
    keys.thumbnails.push(key);
  }
  return keys;
}

import type { FileStore } from './file-store.ts';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { ffmpeg, probe, ToolError, type ProbeResult } from './ffmpeg.ts';
import { composeMaster, packageMp4, readVariants, type HlsVariant } from './hls.ts';
import { ladderArgs, ladderFor, mp4Rungs, thumbnailArgs, thumbnailTimes, type LadderRung } from './presets.ts';

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
  quality: 'sd' | 'hd';
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
  /** The HLS ladder: `dir/master.m3u8`, `dir/<rung>/…`. */
  hls: { dir: string; variants: HlsVariant[] };
}

export interface LadderCommand {
  ladder: LadderRung[];
  hlsDir: string;
  /** ffmpeg's own master playlist in hlsDir (read for CODECS, then replaced by Reelbase's). */
  ffmpegMaster: string;
  /** ffmpeg arguments (after the common flags of `ffmpeg()`). */
  args: string[];
}

const FFMPEG_MASTER = 'ffmpeg-master.m3u8';

/**
 * The one ffmpeg command that encodes a probed source's HLS ladder into `workDir/hls` and writes the
 * thumbnails (`thumbnail-<n>.jpg` in `workDir`, at the hd file's size) from the frames it decodes
 * anyway. The bench runs exactly this command as its baseline.
 */
export function ladderCommand(info: ProbeResult, source: string, workDir: string, audioGainDb?: number): LadderCommand {
  const ladder = ladderFor(info);
  const hlsDir = path.join(workDir, 'hls');
  const thumbnails = { times: thumbnailTimes(info.duration), pattern: path.join(workDir, 'thumbnail-%d.jpg'), size: mp4Rungs(ladder).hd.size };
  return {
    ladder,
    hlsDir,
    ffmpegMaster: FFMPEG_MASTER,
    args: ladderArgs({ input: source, hlsDir, ladder, hasAudio: info.hasAudio, audioGainDb, thumbnails, masterName: FFMPEG_MASTER }),
  };
}

/** The HLS ladder of a probed source in `workDir/hls`, with Reelbase's master playlist (and the thumbnails in `workDir`). */
export async function encodeLadder(o: PipelineOptions, info: ProbeResult): Promise<{ command: LadderCommand; variants: HlsVariant[] }> {
  const command = ladderCommand(info, o.source, o.workDir, o.audioGainDb);
  await fsp.mkdir(command.hlsDir, { recursive: true });
  await ffmpeg(o.ffmpegPath, command.args, { signal: o.signal });
  const variants = await readVariants(command.hlsDir, command.ladder, command.ffmpegMaster, info.frameRate);
  await fsp.writeFile(path.join(command.hlsDir, 'master.m3u8'), composeMaster(variants));
  await fsp.rm(path.join(command.hlsDir, command.ffmpegMaster), { force: true });
  return { command, variants };
}

/**
 * Source → probe → the HLS ladder in one encode (+ thumbnails) → Reelbase's master playlist → the sd
 * and hd MP4 files packaged from the ladder's streams (no second encode), all in `workDir`. Throws
 * NotAVideoError for a source that is not a video and ToolError when ffmpeg fails; the job's signal
 * kills ffmpeg.
 */
export async function processSource(o: PipelineOptions): Promise<PipelineResult> {
  const info = await probe(o.ffprobePath, o.source, { signal: o.signal });
  const { command, variants } = await encodeLadder(o, info);

  const renditions: RenditionFile[] = [];
  const mp4 = mp4Rungs(command.ladder);
  for (const quality of ['sd', 'hd'] as const) {
    const output = path.join(o.workDir, `${quality}.mp4`);
    await packageMp4(o.ffmpegPath, path.join(command.hlsDir, mp4[quality].name), output, o.signal);
    renditions.push({ quality, file: output, ...mp4[quality].size, bytes: (await fsp.stat(output)).size });
  }

  const size = mp4.hd.size;
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
  return { probe: info, renditions, thumbnails, hls: { dir: command.hlsDir, variants } };
}

async function existing(shots: ThumbnailFile[]): Promise<ThumbnailFile[]> {
  const found: ThumbnailFile[] = [];
  for (const shot of shots) {
    const stat = await fsp.stat(shot.file).catch(() => null);
    if (stat && stat.size > 0) found.push(shot);
  }
  return found;
}

/** Puts an encoded ladder into the store under `folder/<name>` (`hls`); answers its master playlist's key. */
export async function storeLadder(store: FileStore, folder: string, hlsDir: string, name = 'hls'): Promise<string> {
  // The rungs' playlists and segments first, the master last: whoever finds the master finds everything it names.
  const files = await fsp.readdir(hlsDir, { recursive: true });
  for (const file of files.sort()) {
    if (file === 'master.m3u8' || !(await fsp.stat(path.join(hlsDir, file))).isFile()) continue;
    await store.put(`${folder}/${name}/${file.split(path.sep).join('/')}`, path.join(hlsDir, file));
  }
  await store.put(`${folder}/${name}/master.m3u8`, path.join(hlsDir, 'master.m3u8'));
  return `${folder}/${name}/master.m3u8`;
}

/** Puts a processing result's files into the store under `folder` (the ladder under `folder/hls`); answers their keys. */
export async function storeResult(
  store: FileStore,
  folder: string,
  result: PipelineResult,
): Promise<{ renditions: string[]; thumbnails: string[]; hls: string }> {
  const keys = { renditions: [] as string[], thumbnails: [] as string[], hls: await storeLadder(store, folder, result.hls.dir) };
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

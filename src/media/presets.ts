/**
 * What Reelbase produces from a source (docs/media.md, "Adaptive streaming"): an HLS ladder of H.264/AAC
 * renditions at 1080p, 720p, 480p, 360p and 240p that do not exceed the source, encoded once, the
 * spec's two MP4 files (sd about 480p, hd about 720p) packaged from the same encoded streams, and a
 * few JPEG thumbnails. Sizes name the short side, so portrait videos get the same quality as
 * landscape ones; nothing is upscaled.
 */

/** One rendition of the HLS ladder. */
export interface Rung {
  /** Target short side in pixels. */
  short: number;
  crf: number;
  maxrateKbps: number;
  audioKbps: number;
}

export const LADDER: Rung[] = [
  { short: 1080, crf: 22, maxrateKbps: 6000, audioKbps: 128 },
  { short: 720, crf: 23, maxrateKbps: 3000, audioKbps: 128 },
  { short: 480, crf: 23, maxrateKbps: 1500, audioKbps: 96 },
  { short: 360, crf: 24, maxrateKbps: 800, audioKbps: 96 },
  { short: 240, crf: 25, maxrateKbps: 400, audioKbps: 64 },
];

/** Seconds per HLS segment; every rendition has a keyframe at each multiple, so segments align. */
export const SEGMENT_SECONDS = 4;

/**
 * x264 preset of the ladder: `veryfast` keeps the whole ladder of a 1080p30 source within about its
 * duration on two cores (bench/media.ts measures it) at a quality close to `medium` for this content.
 */
export const X264_PRESET = 'veryfast';

export interface LadderRung {
  rung: Rung;
  size: { width: number; height: number };
  /** Its folder and name in the HLS output: the short side, `720p`. */
  name: string;
}

/**
 * The rungs for a source: those not above its short side (a source below the smallest rung gets one
 * rung at its own size), largest first.
 */
export function ladderFor(source: { width: number; height: number }): LadderRung[] {
  const sourceShort = Math.min(source.width, source.height);
  const fitting = LADDER.filter((r) => r.short <= sourceShort);
  const rungs = fitting.length > 0 ? fitting : [{ ...LADDER[LADDER.length - 1], short: sourceShort }];
  return rungs.map((rung) => {
    const size = renditionSize(source, rung.short);
    return { rung, size, name: `${Math.min(size.width, size.height)}p` };
  });
}

/** The rungs the spec's sd and hd files are packaged from: the largest at most 480p, and at most 720p. */
export function mp4Rungs(ladder: LadderRung[]): Record<'sd' | 'hd', LadderRung> {
  const atMost = (short: number) => ladder.find((r) => r.rung.short <= short) ?? ladder[ladder.length - 1];
  return { sd: atMost(480), hd: atMost(720) };
}

/** Thumbnails generated per video, evenly spaced. */
export const THUMBNAIL_COUNT = 4;

const even = (n: number) => Math.max(2, 2 * Math.round(n / 2));

/** Output size for a target short side: aspect kept, both sides even, never larger than the source. */
export function renditionSize(source: { width: number; height: number }, short: number): { width: number; height: number } {
  const sourceShort = Math.min(source.width, source.height);
  const targetShort = Math.min(short, sourceShort);
  const scale = targetShort / sourceShort;
  return { width: even(source.width * scale), height: even(source.height * scale) };
}

export interface LadderInput {
  input: string;
  /** Where the HLS output goes: `<hlsDir>/<rung name>/{index.m3u8,init.mp4,seg-NNNNN.m4s}`. */
  hlsDir: string;
  ladder: LadderRung[];
  hasAudio: boolean;
  audioGainDb?: number;
  /** Also write JPEG thumbnails at these times, at `size`, from the frames decoded anyway. */
  thumbnails?: { times: number[]; pattern: string; size: { width: number; height: number } };
  /** Name of ffmpeg's own master playlist (read for its CODECS, then replaced). */
  masterName: string;
}

/**
 * One ffmpeg run for the whole ladder (after the common flags of `ffmpeg()`): the source is decoded
 * once and scaled down rung by rung, each rung to one x264 encoder; keyframes are forced every
 * SEGMENT_SECONDS with scene-cut keyframes off, so the segments of every rung start at the same
 * times; CMAF (fMP4) segments. Each rung carries its own AAC track (muxed segments: every player
 * plays every rung alone; an AAC encode costs little beside the video). A source without audio gets a
 * silent track, as the MP4 files always had.
 */
export function ladderArgs(t: LadderInput): string[] {
  const args = ['-i', t.input];
  if (!t.hasAudio) args.push('-f', 'lavfi', '-i', 'anullsrc=channel_layout=stereo:sample_rate=48000');
  const shots = t.thumbnails?.times.length ? t.thumbnails : null;
  // Scaled in a cascade (1080p → 720p → 480p …), each rung from the one above it: the scalers read
  // ever smaller frames instead of the full source five times. The thumbnails come from their rung.
  const shotsAt = shots
    ? Math.max(
        0,
        t.ladder.findIndex((r) => r.size.width === shots.size.width && r.size.height === shots.size.height),
      )
    : -1;
  const graph = t.ladder.map((r, i) => {
    const input = i === 0 ? '[0:v:0]' : `[t${i - 1}]`;
    const outputs = [`[o${i}]`, ...(i < t.ladder.length - 1 ? [`[t${i}]`] : []), ...(i === shotsAt ? ['[shots]'] : [])];
    const scale = `${input}scale=${r.size.width}:${r.size.height},setsar=1`;
    return outputs.length > 1 ? `${scale},split=${outputs.length}${outputs.join('')}` : `${scale}${outputs[0]}`;
  });
  if (shots) {
    const first = shots.times[0].toFixed(3);
    const step = (shots.times.length > 1 ? shots.times[1] - shots.times[0] : 1).toFixed(3);
    const select = `select='if(isnan(prev_selected_t),gte(t,${first}),gte(t-prev_selected_t,${step}))'`;
    graph.push(`[shots]${select},trim=end_frame=${shots.times.length}[thumbs]`);
  }
  args.push('-filter_complex', graph.join(';'));
  t.ladder.forEach((_, i) => args.push('-map', `[o${i}]`));
  t.ladder.forEach(() => args.push('-map', t.hasAudio ? '0:a:0' : '1:a:0'));
  args.push('-c:v', 'libx264', '-preset', X264_PRESET, '-profile:v', 'high', '-pix_fmt', 'yuv420p');
  t.ladder.forEach((r, i) =>
    args.push(`-crf:v:${i}`, String(r.rung.crf), `-maxrate:v:${i}`, `${r.rung.maxrateKbps}k`, `-bufsize:v:${i}`, `${r.rung.maxrateKbps * 2}k`),
  );
  args.push('-force_key_frames', `expr:gte(t,n_forced*${SEGMENT_SECONDS})`, '-sc_threshold', '0');
  if (t.hasAudio && t.audioGainDb) args.push('-af', `volume=${t.audioGainDb}dB`);
  args.push('-c:a', 'aac', '-ac', '2', '-ar', '48000');
  t.ladder.forEach((r, i) => args.push(`-b:a:${i}`, `${r.rung.audioKbps}k`));
  if (!t.hasAudio) args.push('-shortest');
  args.push(
    '-map_metadata',
    '-1',
    '-f',
    'hls',
    '-hls_time',
    String(SEGMENT_SECONDS),
    '-hls_playlist_type',
    'vod',
    '-hls_segment_type',
    'fmp4',
    '-hls_flags',
    'independent_segments',
    '-hls_fmp4_init_filename',
    'init.mp4',
    '-hls_segment_filename',
    `${t.hlsDir}/%v/seg-%05d.m4s`,
    '-master_pl_name',
    t.masterName,
    '-var_stream_map',
    t.ladder.map((r, i) => `v:${i},a:${i},name:${r.name}`).join(' '),
    `${t.hlsDir}/%v/index.m3u8`,
  );
  if (shots) {
    args.push('-map', '[thumbs]', '-vsync', 'vfr', '-frames:v', String(shots.times.length), '-q:v', '3', '-start_number', '0', '-f', 'image2', shots.pattern);
  }
  return args;
}

/** Seconds at which thumbnails are taken: the middles of `count` equal parts of the video. */
export function thumbnailTimes(duration: number, count = THUMBNAIL_COUNT): number[] {
  return Array.from({ length: count }, (_, i) => Math.max(0, Math.min(duration - 0.05, (duration * (i + 0.5)) / count)));
}

/** One ffmpeg run taking a JPEG at each time (input seeking; the fallback when a transcode made none). */
export function thumbnailArgs(input: string, shots: Array<{ seconds: number; output: string }>, size: { width: number; height: number }): string[] {
  const args: string[] = [];
  for (const shot of shots) args.push('-ss', shot.seconds.toFixed(3), '-i', input);
  shots.forEach((shot, i) => {
    args.push('-map', `${i}:v:0`, '-frames:v', '1', '-vf', `scale=${size.width}:${size.height},setsar=1`, '-q:v', '3', '-f', 'image2', shot.output);
  });
  return args;
}

/**
 * What Reelbase produces from a source: two H.264/AAC MP4 renditions and a few JPEG thumbnails.
 * The sizes name the short side (480p, 720p), so portrait videos get the same quality as landscape
 * ones; a source smaller than a rendition keeps its size (never upscaled).
 */

export interface Rendition {
  quality: 'sd' | 'hd';
  /** Target short side in pixels. */
  short: number;
  crf: number;
  maxrateKbps: number;
  audioKbps: number;
}

export const RENDITIONS: Rendition[] = [
  { quality: 'sd', short: 480, crf: 23, maxrateKbps: 1500, audioKbps: 96 },
  { quality: 'hd', short: 720, crf: 23, maxrateKbps: 3000, audioKbps: 128 },
];

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

export interface TranscodeInput {
  input: string;
  output: string;
  size: { width: number; height: number };
  rendition: Rendition;
  hasAudio: boolean;
  /** Video `audio_gain`, in dB (0: unchanged). */
  audioGainDb?: number;
  /**
   * Also write JPEG thumbnails (at the rendition's size) at these times, from the frames this
   * transcode decodes anyway: `pattern` is an image2 pattern numbered from 0 (`…/thumbnail-%d.jpg`).
   */
  thumbnails?: { times: number[]; pattern: string };
}

/**
 * ffmpeg arguments for one rendition (after the common flags of `ffmpeg()`). A source without audio
 * gets a silent AAC track, so that every file has the same shape (players, concatenation, HLS later).
 * Metadata (camera, location…) is not copied.
 */
export function transcodeArgs(t: TranscodeInput): string[] {
  const args = ['-i', t.input];
  if (!t.hasAudio) args.push('-f', 'lavfi', '-i', 'anullsrc=channel_layout=stereo:sample_rate=48000');
  const scale = `scale=${t.size.width}:${t.size.height},setsar=1`;
  const shots = t.thumbnails?.times.length ? t.thumbnails : null;
  if (shots) {
    // One decode for both: the scaled frames go to the encoder and, at the chosen times, to JPEGs.
    const first = shots.times[0].toFixed(3);
    const step = (shots.times.length > 1 ? shots.times[1] - shots.times[0] : 1).toFixed(3);
    const select = `select='if(isnan(prev_selected_t),gte(t,${first}),gte(t-prev_selected_t,${step}))'`;
    // trim ends the thumbnail branch after the last shot, so that it holds no frames after that.
    args.push('-filter_complex', `[0:v:0]${scale},split=2[main][shots];[shots]${select},trim=end_frame=${shots.times.length}[thumbs]`, '-map', '[main]');
  } else {
    args.push('-map', '0:v:0', '-vf', scale);
  }
  args.push('-map', t.hasAudio ? '0:a:0' : '1:a:0');
  args.push(
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    String(t.rendition.crf),
    '-maxrate',
    `${t.rendition.maxrateKbps}k`,
    '-bufsize',
    `${t.rendition.maxrateKbps * 2}k`,
    '-pix_fmt',
    'yuv420p',
    '-profile:v',
    'high',
  );
  if (t.hasAudio && t.audioGainDb) args.push('-af', `volume=${t.audioGainDb}dB`);
  args.push('-c:a', 'aac', '-b:a', `${t.rendition.audioKbps}k`, '-ac', '2', '-ar', '48000');
  if (!t.hasAudio) args.push('-shortest');
  args.push('-map_metadata', '-1', '-movflags', '+faststart', '-f', 'mp4', t.output);
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

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ffmpeg } from './ffmpeg.ts';
import type { LadderRung } from './presets.ts';

/** One rendition of an encoded ladder, as the master playlist describes it. */
export interface HlsVariant {
  name: string;
  width: number;
  height: number;
  /** Peak bits per second over its segments (BANDWIDTH). */
  bandwidth: number;
  /** Bits per second over the whole rendition (AVERAGE-BANDWIDTH). */
  averageBandwidth: number;
  codecs: string;
  frameRate: number | null;
}

/** A media playlist's init segment and segments (URIs as written, relative to it) with their durations. */
export function parseMediaPlaylist(text: string): { init: string | null; segments: Array<{ uri: string; duration: number }> } {
  let init: string | null = null;
  const segments: Array<{ uri: string; duration: number }> = [];
  let duration: number | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const map = /^#EXT-X-MAP:.*URI="([^"]+)"/.exec(line);
    if (map) init = map[1];
    else if (line.startsWith('#EXTINF:')) duration = Number.parseFloat(line.slice(8));
    else if (line && !line.startsWith('#') && duration !== null) {
      segments.push({ uri: line, duration });
      duration = null;
    }
  }
  return { init, segments };
}

/** The CODECS ffmpeg wrote for each rendition in its own master playlist, by the rendition's folder. */
function codecsOf(master: string): Map<string, string> {
  const codecs = new Map<string, string>();
  const lines = master.split('\n').map((l) => l.trim());
  lines.forEach((line, i) => {
    const found = /CODECS="([^"]+)"/.exec(line);
    const uri = lines[i + 1];
    if (line.startsWith('#EXT-X-STREAM-INF') && found && uri) codecs.set(uri.split('/')[0], found[1]);
  });
  return codecs;
}

/** Measures each encoded rendition from its files: peak and average bit rates, and its codecs. */
export async function readVariants(hlsDir: string, ladder: LadderRung[], ffmpegMaster: string, frameRate: number | null): Promise<HlsVariant[]> {
  const codecs = codecsOf(await fsp.readFile(path.join(hlsDir, ffmpegMaster), 'utf8'));
  const variants: HlsVariant[] = [];
  for (const r of ladder) {
    const dir = path.join(hlsDir, r.name);
    const playlist = parseMediaPlaylist(await fsp.readFile(path.join(dir, 'index.m3u8'), 'utf8'));
    let bytes = 0;
    let seconds = 0;
    let peak = 0;
    for (const segment of playlist.segments) {
      const size = (await fsp.stat(path.join(dir, segment.uri))).size;
      bytes += size;
      seconds += segment.duration;
      // A short last segment says little about the peak: it counts as if it lasted one second at least.
      peak = Math.max(peak, (size * 8) / Math.max(segment.duration, 1));
    }
    const average = seconds > 0 ? (bytes * 8) / seconds : 0;
    variants.push({
      name: r.name,
      ...r.size,
      bandwidth: Math.ceil(Math.max(peak, average)),
      averageBandwidth: Math.ceil(average),
      codecs: codecs.get(r.name) ?? 'avc1.640028,mp4a.40.2',
      frameRate,
    });
  }
  return variants;
}

/** The master playlist of a ladder: largest rendition first, every attribute players choose by. */
export function composeMaster(variants: HlsVariant[]): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-INDEPENDENT-SEGMENTS'];
  for (const v of variants) {
    const attributes = [
      `BANDWIDTH=${v.bandwidth}`,
      `AVERAGE-BANDWIDTH=${v.averageBandwidth}`,
      `RESOLUTION=${v.width}x${v.height}`,
      `CODECS="${v.codecs}"`,
      ...(v.frameRate ? [`FRAME-RATE=${v.frameRate.toFixed(3)}`] : []),
    ];
    lines.push(`#EXT-X-STREAM-INF:${attributes.join(',')}`, `${v.name}/index.m3u8`);
  }
  return `${lines.join('\n')}\n`;
}

export interface SubtitleTrack {
  name: string;
  language: string;
  /** The subtitles media playlist's URI (relative to the master's, or absolute). */
  uri: string;
  default: boolean;
}

/** A published caption as the master playlist names it. */
export interface CaptionForTrack {
  id: number;
  language: string;
  localized_language_name?: string | null;
  formatted_language_name?: string | null;
  is_default: boolean;
}

/** The subtitle renditions of a video's published captions; `uriOf` says where each one's playlist is. */
export function subtitleTracks(captions: CaptionForTrack[], uriOf: (id: number) => string): SubtitleTrack[] {
  return captions.map((c) => ({
    name: c.localized_language_name || c.formatted_language_name || c.language,
    language: c.language,
    uri: uriOf(c.id),
    default: c.is_default,
  }));
}

/** The master playlist with WebVTT subtitle renditions (one group, `subs`) that every variant names. */
export function withSubtitles(master: string, tracks: SubtitleTrack[]): string {
  if (tracks.length === 0) return master;
  const quote = (s: string) => s.replace(/["\r\n]/g, '');
  const media = tracks.map(
    (t) =>
      `#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="${quote(t.name)}",LANGUAGE="${quote(t.language)}",AUTOSELECT=YES,DEFAULT=${t.default ? 'YES' : 'NO'},URI="${quote(t.uri)}"`,
  );
  const lines = master.trimEnd().split('\n');
  const out: string[] = [];
  for (const line of lines) {
    if (line.startsWith('#EXT-X-STREAM-INF:')) {
      if (media.length > 0) out.push(...media.splice(0));
      out.push(`${line},SUBTITLES="subs"`);
    } else out.push(line);
  }
  return `${out.join('\n')}\n`;
}

/** A subtitles media playlist holding one WebVTT file for the whole video. */
export function subtitlePlaylist(vttUri: string, durationSeconds: number): string {
  const d = Math.max(1, Math.ceil(durationSeconds));
  return [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    `#EXT-X-TARGETDURATION:${d}`,
    '#EXT-X-MEDIA-SEQUENCE:0',
    '#EXT-X-PLAYLIST-TYPE:VOD',
    `#EXTINF:${d}.000,`,
    vttUri,
    '#EXT-X-ENDLIST',
    '',
  ].join('\n');
}

/**
 * A progressive MP4 of one encoded rendition, without encoding again: its init segment and media
 * segments joined (a fragmented MP4), then remuxed with the index in front (`+faststart`).
 */
export async function packageMp4(ffmpegPath: string, variantDir: string, output: string, signal?: AbortSignal): Promise<void> {
  const playlist = parseMediaPlaylist(await fsp.readFile(path.join(variantDir, 'index.m3u8'), 'utf8'));
  const joined = `${output}.fragmented.mp4`;
  const out = fs.createWriteStream(joined);
  try {
    for (const uri of [...(playlist.init ? [playlist.init] : []), ...playlist.segments.map((s) => s.uri)]) {
      await pipeline(fs.createReadStream(path.join(variantDir, uri)), out, { end: false, signal });
    }
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    await ffmpeg(ffmpegPath, ['-i', joined, '-map', '0', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', output], { signal });
  } finally {
    out.destroy();
    await fsp.rm(joined, { force: true });
  }
}

/** Whether a stored key is a video's HLS master playlist (`videos/<uuid>/<run>/hls…/master.m3u8`). */
export const isMaster = (key: string) => /^videos\/[^/]+\/[^/]+\/hls[^/]*\/master\.m3u8$/.test(key);

/**
 * A VOD media playlist cut at `seconds`: its segments up to the one that plays that second, then
 * the end. What a viewer gets of a chapter whose email gate opens at a later second
 * (docs/watch.md); `uris` are the segments (and the init segment) it names, the only ones served.
 */
export function cutPlaylist(text: string, seconds: number): { text: string; uris: Set<string> } {
  const out: string[] = [];
  const uris = new Set<string>();
  let start = 0;
  let pending: number | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line === '#EXT-X-ENDLIST') continue;
    if (line.startsWith('#EXTINF:')) {
      if (start >= seconds) break;
      pending = Number.parseFloat(line.slice(8)) || 0;
    } else if (!line.startsWith('#')) {
      if (pending === null) continue;
      uris.add(line);
      start += pending;
      pending = null;
    } else {
      const map = /^#EXT-X-MAP:.*URI="([^"]+)"/.exec(line);
      if (map) uris.add(map[1]);
    }
    out.push(line);
  }
  return { text: `${out.join('\n')}\n#EXT-X-ENDLIST\n`, uris };
}

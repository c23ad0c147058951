/**
 * The viewer's playlist, composed from the parts the packager wrote (each part a full list of its
 * segments): with DVR, every segment of the broadcast (an EVENT playlist viewers can seek in);
 * without, a short sliding window at the live edge. Parts are joined with discontinuities.
 */

export interface Segment {
  duration: number;
  uri: string;
  programDateTime?: string;
}

export interface PartPlaylist {
  /** Directory name of the part (e.g. `p0001`); segment URIs are relative to it. */
  name: string;
  segments: Segment[];
  ended: boolean;
}

/** Reads an ffmpeg media playlist: its segments and whether it was closed (#EXT-X-ENDLIST). */
export function parseMediaPlaylist(text: string): { segments: Segment[]; ended: boolean } {
  const segments: Segment[] = [];
  let duration: number | null = null;
  let pdt: string | undefined;
  let ended = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    if (line.startsWith('#EXTINF:')) {
      const d = Number.parseFloat(line.slice(8));
      duration = Number.isFinite(d) ? d : 0;
    } else if (line.startsWith('#EXT-X-PROGRAM-DATE-TIME:')) {
      pdt = line.slice(25);
    } else if (line === '#EXT-X-ENDLIST') {
      ended = true;
    } else if (!line.startsWith('#') && duration !== null) {
      segments.push({ duration, uri: line, ...(pdt ? { programDateTime: pdt } : {}) });
      duration = null;
      pdt = undefined;
    }
  }
  return { segments, ended };
}

/** Segments a viewer without DVR sees: about 24 seconds, at least 4 segments. */
export function windowSegments(segmentLength: number): number {
  return Math.max(4, Math.ceil(24 / segmentLength));
}

export function composePlaylist(parts: PartPlaylist[], opts: { dvr: boolean; ended: boolean; segmentLength: number; blockingReload?: boolean }): string {
  const all: Array<Segment & { part: string; discontinuity: boolean }> = [];
  parts.forEach((part, p) => {
    part.segments.forEach((s, i) => all.push({ ...s, uri: `${part.name}/${s.uri}`, part: part.name, discontinuity: p > 0 && i === 0 }));
  });
  const start = opts.dvr ? 0 : Math.max(0, all.length - windowSegments(opts.segmentLength));
  const shown = all.slice(start);
  const discontinuitiesBefore = all.slice(0, start).filter((s) => s.discontinuity).length;
  const target = Math.max(opts.segmentLength, ...shown.map((s) => Math.ceil(s.duration)));
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${target}`, `#EXT-X-MEDIA-SEQUENCE:${start}`];
  if (discontinuitiesBefore > 0) lines.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${discontinuitiesBefore}`);
  // Blocking reloads (`_HLS_msn`, LL-HLS) without partial segments: the server holds a reload until the asked segment is listed.
  if (opts.blockingReload && !opts.ended) lines.push('#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES');
  if (opts.dvr) lines.push('#EXT-X-PLAYLIST-TYPE:EVENT');
  lines.push('#EXT-X-INDEPENDENT-SEGMENTS');
  shown.forEach((s, i) => {
    if (s.discontinuity && i > 0) lines.push('#EXT-X-DISCONTINUITY');
    if (s.programDateTime) lines.push(`#EXT-X-PROGRAM-DATE-TIME:${s.programDateTime}`);
    lines.push(`#EXTINF:${s.duration.toFixed(6)},`, s.uri);
  });
  if (opts.ended) lines.push('#EXT-X-ENDLIST');
  return `${lines.join('\n')}\n`;
}

/**
 * SRT and WebVTT: parsing, validation and conversion. Pure functions, no I/O.
 *
 * Parsing is deliberately strict about structure (a file that does not parse is reported with the
 * line that failed, so that the user can fix it) and lenient about what real-world files get wrong
 * without ambiguity: a byte-order mark, CRLF or CR line ends, whitespace-only "blank" lines, several
 * blank lines between cues, `,` or `.` before the milliseconds in either format, a missing hours
 * field, 1..3 fraction digits, and non-numeric SRT counters.
 */

export type SubtitleFormat = 'srt' | 'vtt';

export interface Cue {
  /** The cue identifier (VTT) or counter (SRT) as written; null when there was none. */
  identifier: string | null;
  /** Start and end in milliseconds from the start of the video. */
  start: number;
  end: number;
  /** VTT cue settings (`align:start line:0`), as written; '' when none. */
  settings: string;
  /** The cue payload, lines joined with '\n'; may contain markup (`<i>`, `<v Name>`, …). */
  text: string;
}

export interface Subtitles {
  cues: Cue[];
  /** VTT STYLE and REGION blocks found before the first cue, kept verbatim (without trailing newline). */
  blocks: string[];
}

/** A file that is not valid SRT/VTT. `line` is 1-based, counted in the file as given. */
export class SubtitleParseError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
    this.name = 'SubtitleParseError';
  }
}

/** Largest timestamp accepted (hours are not bounded by the formats; 99 999 h is plenty). */
const MAX_MS = 99_999 * 3_600_000 + 59 * 60_000 + 59_999;

// ---------------------------------------------------------------------------------------------
// Text handling

/** Bytes of a subtitle file → text: UTF-8 (with or without BOM), UTF-16 with a BOM, else Windows-1252. */
export function decodeSubtitleBytes(bytes: Uint8Array): string {
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    // Older SRT files are often Windows-1252 (Latin-1 plus typographic quotes). Decoded by hand: some
    // Node builds decode the label 'windows-1252' as plain Latin-1.
    let out = '';
    for (const b of bytes) out += b >= 0x80 && b <= 0x9f ? CP1252[b - 0x80] : String.fromCharCode(b);
    return out;
  }
}

// Windows-1252 0x80..0x9F (the five undefined positions keep their C1 code points).
const CP1252 = [
  '\u20ac',
  '\u0081',
  '\u201a',
  '\u0192',
  '\u201e',
  '\u2026',
  '\u2020',
  '\u2021',
  '\u02c6',
  '\u2030',
  '\u0160',
  '\u2039',
  '\u0152',
  '\u008d',
  '\u017d',
  '\u008f',
  '\u0090',
  '\u2018',
  '\u2019',
  '\u201c',
  '\u201d',
  '\u2022',
  '\u2013',
  '\u2014',
  '\u02dc',
  '\u2122',
  '\u0161',
  '\u203a',
  '\u0153',
  '\u009d',
  '\u017e',
  '\u0178',
];

/** Lines of the text without BOM, split on CRLF, CR or LF. */
function linesOf(text: string): string[] {
  return text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
}

const isBlank = (line: string) => line.trim() === '';

// ---------------------------------------------------------------------------------------------
// Timestamps

// [hours:]minutes:seconds[.,]fraction; hours any number of digits, minutes and seconds one or two.
const TIMESTAMP = String.raw`(?:(\d+):)?(\d{1,2}):(\d{1,2})(?:[.,](\d{1,3}))?`;
// No lazy or trailing-whitespace groups: a long line must not make the match quadratic.
const TIMING_LINE = new RegExp(String.raw`^\s*${TIMESTAMP}[ \t]*-->[ \t]*${TIMESTAMP}(?:[ \t]+(.*))?$`);

function toMs(h: string | undefined, m: string, s: string, frac: string | undefined, lineNo: number, which: string): number {
  const hours = h === undefined ? 0 : Number(h);
  const minutes = Number(m);
  const seconds = Number(s);
  if (minutes > 59) throw new SubtitleParseError(lineNo, `${which} time has ${minutes} minutes (at most 59)`);
  if (seconds > 59) throw new SubtitleParseError(lineNo, `${which} time has ${seconds} seconds (at most 59)`);
  // A fraction is a decimal fraction of a second: ",5" is 500 ms, ",05" 50 ms.
  const millis = frac === undefined ? 0 : Number(frac.padEnd(3, '0'));
  const ms = ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis;
  if (!Number.isSafeInteger(ms) || ms > MAX_MS) throw new SubtitleParseError(lineNo, `${which} time is too large`);
  return ms;
}

interface Timing {
  start: number;
  end: number;
  settings: string;
}

/** Parses a cue timing line; null when the line is no timing line at all (no `-->`). */
function parseTiming(line: string, lineNo: number): Timing | null {
  if (!line.includes('-->')) return null;
  const m = TIMING_LINE.exec(line);
  if (!m) {
    throw new SubtitleParseError(lineNo, `malformed cue timing "${clip(line)}" (expected HH:MM:SS.mmm --> HH:MM:SS.mmm)`);
  }
  const start = toMs(m[1], m[2], m[3], m[4], lineNo, 'start');
  const end = toMs(m[5], m[6], m[7], m[8], lineNo, 'end');
  if (end < start) throw new SubtitleParseError(lineNo, `cue ends (${formatTimestamp(end, '.')}) before it starts (${formatTimestamp(start, '.')})`);
  return { start, end, settings: (m[9] ?? '').trim() };
}

/** `HH:MM:SS.mmm` (hours at least two digits); `sep` is ',' for SRT and '.' for VTT. */
export function formatTimestamp(ms: number, sep: ',' | '.' = '.'): string {
  const total = Math.max(0, Math.round(ms));
  const millis = total % 1000;
  const seconds = Math.floor(total / 1000) % 60;
  const minutes = Math.floor(total / 60_000) % 60;
  const hours = Math.floor(total / 3_600_000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(hours)}:${two(minutes)}:${two(seconds)}${sep}${String(millis).padStart(3, '0')}`;
}

function clip(line: string, max = 60): string {
  const t = line.trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

// ---------------------------------------------------------------------------------------------
// Blocks

interface Block {
  /** 1-based line number of the block's first line. */
  line: number;
  lines: string[];
}

/** Groups lines into blocks separated by one or more blank lines, starting at index `from`. */
function blocksOf(lines: string[], from: number): Block[] {
  const blocks: Block[] = [];
  let current: Block | null = null;
  for (let i = from; i < lines.length; i++) {
    if (isBlank(lines[i])) {
      current = null;
      continue;
    }
    if (!current) {
      current = { line: i + 1, lines: [] };
      blocks.push(current);
    }
    current.lines.push(lines[i]);
  }
  return blocks;
}

/**
 * A cue block: an optional identifier line, the timing line, then the payload. Throws naming the line
 * when the block has no timing where one must be.
 */
function cueOf(block: Block, format: SubtitleFormat): Cue {
  const [first, second] = block.lines;
  let identifier: string | null = null;
  let timingIndex = 0;
  let timing = parseTiming(first, block.line);
  if (!timing) {
    identifier = first.trim();
    if (second === undefined) {
      throw new SubtitleParseError(block.line + 1, `expected a cue timing line after "${clip(first)}", found the end of the cue`);
    }
    timing = parseTiming(second, block.line + 1);
    if (!timing) {
      const what = format === 'srt' ? 'a cue timing line (HH:MM:SS,mmm --> HH:MM:SS,mmm)' : 'a cue timing line (HH:MM:SS.mmm --> HH:MM:SS.mmm)';
      throw new SubtitleParseError(block.line + 1, `expected ${what}, found "${clip(second)}"`);
    }
    timingIndex = 1;
  }
  const payload = block.lines.slice(timingIndex + 1);
  // A second timing line inside one block means a blank line between two cues is missing: point at it.
  for (let i = 0; i < payload.length; i++) {
    const lineNo = block.line + timingIndex + 1 + i;
    if (format === 'vtt' && payload[i].includes('-->')) {
      throw new SubtitleParseError(lineNo, 'cue text must not contain "-->" (is a blank line missing before this cue?)');
    }
    if (format === 'srt' && TIMING_LINE.test(payload[i])) {
      throw new SubtitleParseError(lineNo, 'a cue timing line inside cue text (is a blank line missing before this cue?)');
    }
  }
  return {
    identifier,
    start: timing.start,
    end: timing.end,
    settings: format === 'vtt' ? timing.settings : '',
    text: payload.map((l) => l.trimEnd()).join('\n'),
  };
}

// ---------------------------------------------------------------------------------------------
// Parsers

/** Parses SubRip text. Throws SubtitleParseError naming the failing line. */
export function parseSrt(text: string): Subtitles {
  const lines = linesOf(text);
  const cues = blocksOf(lines, 0).map((b) => cueOf(b, 'srt'));
  if (cues.length === 0) throw new SubtitleParseError(1, 'the file contains no cues');
  return { cues, blocks: [] };
}

const WEBVTT_SIGNATURE = /^WEBVTT(?:[ \t].*)?$/;

/** Parses WebVTT text. Throws SubtitleParseError naming the failing line. */
export function parseVtt(text: string): Subtitles {
  const lines = linesOf(text);
  if (!WEBVTT_SIGNATURE.test(lines[0] ?? '')) {
    throw new SubtitleParseError(1, `a WebVTT file must start with "WEBVTT", found "${clip(lines[0] ?? '')}"`);
  }
  // The header runs up to the first blank line; a timing line there means the blank line is missing.
  let i = 1;
  for (; i < lines.length && !isBlank(lines[i]); i++) {
    if (lines[i].includes('-->')) throw new SubtitleParseError(i + 1, 'a cue must be separated from the WEBVTT header by a blank line');
  }
  const cues: Cue[] = [];
  const blocks: string[] = [];
  for (const block of blocksOf(lines, i)) {
    const head = block.lines[0];
    if (/^NOTE(?:[ \t]|$)/.test(head)) continue;
    const kind = /^(STYLE|REGION)[ \t]*$/.exec(head)?.[1];
    if (kind && !block.lines.some((l) => l.includes('-->'))) {
      if (cues.length > 0) {
        // The format allows them only before the first cue.
        throw new SubtitleParseError(block.line, `a ${kind} block must come before the first cue`);
      }
      blocks.push(block.lines.map((l) => l.trimEnd()).join('\n'));
      continue;
    }
    cues.push(cueOf(block, 'vtt'));
  }
  if (cues.length === 0) throw new SubtitleParseError(1, 'the file contains no cues');
  return { cues, blocks };
}

/** The format of a text: WebVTT when it starts with the WEBVTT signature, else SRT. */
export function detectFormat(text: string): SubtitleFormat {
  return WEBVTT_SIGNATURE.test(linesOf(text.slice(0, 1024))[0] ?? '') ? 'vtt' : 'srt';
}

/** Parses `text` as `format` (detected when not given). */
export function parseSubtitles(text: string, format: SubtitleFormat = detectFormat(text)): Subtitles {
  if (text.includes('\0')) {
    const line = text.slice(0, text.indexOf('\0')).split(/\r\n|\r|\n/).length;
    throw new SubtitleParseError(line, 'contains a NUL character (is this a text file?)');
  }
  return format === 'vtt' ? parseVtt(text) : parseSrt(text);
}

// ---------------------------------------------------------------------------------------------
// Writers

/** Cue text safe inside a VTT cue: `-->` is not allowed there. */
const vttText = (text: string) => text.replace(/-->/g, '--&gt;');

/** WebVTT text of the subtitles (the stored form). */
export function toVtt(subs: Subtitles): string {
  const parts = ['WEBVTT', ...subs.blocks];
  for (const cue of subs.cues) {
    const id = cue.identifier && !cue.identifier.includes('-->') ? `${cue.identifier}\n` : '';
    const settings = cue.settings ? ` ${cue.settings}` : '';
    const timing = `${formatTimestamp(cue.start, '.')} --> ${formatTimestamp(cue.end, '.')}${settings}`;
    parts.push(`${id}${timing}${cue.text ? `\n${vttText(cue.text)}` : ''}`);
  }
  return `${parts.join('\n\n')}\n`;
}

/**
 * Replaces each tag (`<` up to the next `>`) by what `map` answers. Linear in the text's length: a
 * regular expression like /<[^>]*>/g is quadratic on text with many `<` and no `>`.
 */
function mapTags(text: string, map: (tag: string) => string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('<', i);
    if (open === -1) break;
    const close = text.indexOf('>', open + 1);
    if (close === -1) break;
    out += text.slice(i, open) + map(text.slice(open, close + 1));
    i = close + 1;
  }
  return out + text.slice(i);
}

const SRT_TAGS = new Set(['b', 'i', 'u', 'font']);
const VTT_ONLY_TAGS = new Set(['v', 'c', 'lang', 'ruby', 'rt']);

/** Markup SRT players understand: <b>, <i>, <u>, <font …>; VTT voice/class/lang/ruby/timestamp tags go. */
function srtText(text: string): string {
  return mapTags(text, (tag) => {
    if (/^<[\d:.]+>$/.test(tag)) return ''; // a karaoke timestamp
    const m = /^<(\/?)([A-Za-z]+)([.\s][^>]*)?>$/.exec(tag);
    if (!m) return tag;
    const name = m[2].toLowerCase();
    if (VTT_ONLY_TAGS.has(name)) return '';
    // `<b.loud>` (a VTT class) becomes `<b>`; `<font color=…>` keeps its attributes.
    if (SRT_TAGS.has(name) && name !== 'font') return `<${m[1]}${name}>`;
    return tag;
  });
}

/** SubRip text of the subtitles: counters 1..n, `,` before the milliseconds, no cue settings. */
export function toSrt(subs: Subtitles): string {
  return subs.cues
    .map((cue, i) =>
      `${i + 1}\n${formatTimestamp(cue.start, ',')} --> ${formatTimestamp(cue.end, ',')}\n${srtText(cue.text).replace(/&gt;/g, '>').replace(/&lt;/g, '<').replace(/&amp;/g, '&')}`.replace(
        /\n$/,
        '',
      ),
    )
    .join('\n\n')
    .concat('\n');
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', nbsp: '\u00a0', lrm: '\u200e', rlm: '\u200f' };

/** The cue text without markup, entities decoded, lines joined by a space. */
export function plainCueText(text: string): string {
  return mapTags(text, () => '')
    .replace(/&(amp|lt|gt|nbsp|lrm|rlm);/g, (_, name: string) => ENTITIES[name])
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');
}

/** The transcript: one line per cue, markup removed; consecutive duplicates (roll-up captions) once. */
export function toPlainText(subs: Subtitles): string {
  const out: string[] = [];
  for (const cue of subs.cues) {
    const line = plainCueText(cue.text);
    if (line && out[out.length - 1] !== line) out.push(line);
  }
  return out.join('\n');
}

/** The cue texts with their markup, one paragraph per cue. */
export function toFormattedText(subs: Subtitles): string {
  return subs.cues
    .map((c) => c.text.trim())
    .filter(Boolean)
    .join('\n\n');
}

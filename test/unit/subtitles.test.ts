import { describe, expect, it } from 'vitest';
import {
  decodeSubtitleBytes,
  detectFormat,
  formatTimestamp,
  parseSrt,
  parseSubtitles,
  parseVtt,
  plainCueText,
  SubtitleParseError,
  toFormattedText,
  toPlainText,
  toSrt,
  toVtt,
} from '../../src/modules/captions/subtitles.ts';

/** The error a parse throws (fails the test when it does not throw one). */
function failure(fn: () => unknown): SubtitleParseError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SubtitleParseError);
    return err as SubtitleParseError;
  }
  throw new Error('expected a SubtitleParseError');
}

const SRT = `1
00:00:01,000 --> 00:00:04,500
Hello, world.

2
00:00:05,250 --> 00:00:07,000
Two lines
<i>of text</i>
`;

describe('SRT', () => {
  it('parses counters, timings with , millis and multi-line cues', () => {
    const { cues } = parseSrt(SRT);
    expect(cues).toEqual([
      { identifier: '1', start: 1000, end: 4500, settings: '', text: 'Hello, world.' },
      { identifier: '2', start: 5250, end: 7000, settings: '', text: 'Two lines\n<i>of text</i>' },
    ]);
  });

  it('accepts hours of any width, . millis, missing hours and short fractions', () => {
    const { cues } = parseSrt('1\n100:02:03.5 --> 100:02:04,25\nA\n\n2\n01:02,000 --> 01:03,001\nB\n');
    expect(cues[0].start).toBe(((100 * 60 + 2) * 60 + 3) * 1000 + 500);
    expect(cues[0].end).toBe(((100 * 60 + 2) * 60 + 4) * 1000 + 250);
    expect(cues[1].start).toBe(62_000);
    expect(cues[1].end).toBe(63_001);
  });

  it('tolerates a BOM, CRLF and CR line ends, several and whitespace-only blank lines, no counter', () => {
    const crlf = '\uFEFF1\r\n00:00:01,000 --> 00:00:02,000\r\nA\r\n\r\n \t \r\n\r\n00:00:03,000 --> 00:00:04,000\r\nB\r\nC';
    const { cues } = parseSrt(crlf);
    expect(cues.map((c) => [c.identifier, c.text])).toEqual([
      ['1', 'A'],
      [null, 'B\nC'],
    ]);
    const cr = '1\r00:00:01,000 --> 00:00:02,000\rA\r\r2\r00:00:03,000 --> 00:00:04,000\rB\r';
    expect(parseSrt(cr).cues.map((c) => c.text)).toEqual(['A', 'B']);
  });

  it('keeps position coordinates out of the cue and keeps empty cues', () => {
    const { cues } = parseSrt('1\n00:00:01,000 --> 00:00:02,000 X1:10 X2:20 Y1:30 Y2:40\n\n2\n00:00:03,000 --> 00:00:04,000\nB');
    expect(cues[0]).toMatchObject({ settings: '', text: '' });
    expect(cues[1].text).toBe('B');
  });

  it('reports a malformed timing line with its line number', () => {
    const err = failure(() => parseSrt('1\n00:00:01,000 --> 00:00:02,000\nA\n\n2\n00:00:03,000 -> 00:00:04,000\nB\n'));
    expect(err.line).toBe(6);
    expect(err.message).toMatch(/^line 6: expected a cue timing line/);
  });

  it('reports a garbled arrow timing line, out-of-range fields and reversed times', () => {
    expect(failure(() => parseSrt('1\n00:00:0x,000 --> 00:00:02,000\nA')).message).toMatch(/^line 2: malformed cue timing "00:00:0x,000 --> 00:00:02,000"/);
    expect(failure(() => parseSrt('1\n00:61:00,000 --> 01:00:00,000\nA')).message).toBe('line 2: start time has 61 minutes (at most 59)');
    expect(failure(() => parseSrt('1\n00:00:00,000 --> 00:00:60,000\nA')).message).toBe('line 2: end time has 60 seconds (at most 59)');
    expect(failure(() => parseSrt('\n\n1\n00:00:05,000 --> 00:00:04,000\nA')).message).toMatch(/^line 4: cue ends \(00:00:04\.000\) before it starts/);
  });

  it('reports a missing blank line between cues at the second timing line', () => {
    const err = failure(() => parseSrt('1\n00:00:01,000 --> 00:00:02,000\nA\n2\n00:00:03,000 --> 00:00:04,000\nB'));
    expect(err.line).toBe(5);
  });

  it('reports a counter without a timing line, and an empty file', () => {
    expect(failure(() => parseSrt('1\n00:00:01,000 --> 00:00:02,000\nA\n\n2\n')).message).toMatch(/^line 6: expected a cue timing line after "2"/);
    expect(failure(() => parseSrt('')).message).toBe('line 1: the file contains no cues');
    expect(failure(() => parseSrt('\n  \n')).line).toBe(1);
  });

  it('reports a plain text file at its second line', () => {
    const err = failure(() => parseSubtitles('This is not\na subtitle file\n'));
    expect(err.line).toBe(2);
  });
});

const VTT = `WEBVTT - Some title
Kind: captions
Language: en

STYLE
::cue { color: yellow }

NOTE This is a comment
spanning two lines

REGION
id:fred width:40%

intro
00:01.000 --> 00:04.000 align:start line:0
<v Roger>Hello</v> &amp; welcome

NOTE another

01:00:05.250 --> 01:00:07.000
Line one
Line two
`;

describe('WebVTT', () => {
  it('parses header, STYLE/REGION blocks, NOTE comments, identifiers, settings and optional hours', () => {
    const subs = parseVtt(VTT);
    expect(subs.blocks).toEqual(['STYLE\n::cue { color: yellow }', 'REGION\nid:fred width:40%']);
    expect(subs.cues).toEqual([
      { identifier: 'intro', start: 1000, end: 4000, settings: 'align:start line:0', text: '<v Roger>Hello</v> &amp; welcome' },
      { identifier: null, start: 3_605_250, end: 3_607_000, settings: '', text: 'Line one\nLine two' },
    ]);
  });

  it('accepts BOM, CRLF, a bare WEBVTT line, tab after WEBVTT and , millis', () => {
    expect(parseVtt('\uFEFFWEBVTT\r\n\r\n00:00:01,000 --> 00:00:02,000\r\nA\r\n').cues[0]).toMatchObject({ start: 1000, end: 2000, text: 'A' });
    expect(parseVtt('WEBVTT\tx\n\n\n\n00:01.000 --> 00:02.000\nA').cues).toHaveLength(1);
  });

  it('requires the WEBVTT signature on line 1', () => {
    const err = failure(() => parseVtt('WEBVTTX\n\n00:01.000 --> 00:02.000\nA'));
    expect(err.message).toBe('line 1: a WebVTT file must start with "WEBVTT", found "WEBVTTX"');
  });

  it('reports a cue glued to the header, an identifier without timing, a STYLE block after cues', () => {
    expect(failure(() => parseVtt('WEBVTT\n00:01.000 --> 00:02.000\nA')).line).toBe(2);
    expect(failure(() => parseVtt('WEBVTT\n\n00:01.000 --> 00:02.000\nA\n\nid\nnot a timing\n')).message).toMatch(
      /^line 7: expected a cue timing line \(HH:MM:SS\.mmm/,
    );
    expect(failure(() => parseVtt('WEBVTT\n\n00:01.000 --> 00:02.000\nA\n\nSTYLE\n::cue {}\n')).message).toBe(
      'line 6: a STYLE block must come before the first cue',
    );
    expect(failure(() => parseVtt('WEBVTT\n\n00:01.000 --> 00:02.000\nA --> B\n')).line).toBe(4);
  });

  it('treats a file with only a header as having no cues', () => {
    expect(failure(() => parseVtt('WEBVTT\n\nNOTE nothing here\n')).message).toBe('line 1: the file contains no cues');
  });
});

describe('detection, decoding and conversion', () => {
  it('detects the format by the WEBVTT signature', () => {
    expect(detectFormat('WEBVTT\n\n')).toBe('vtt');
    expect(detectFormat('\uFEFFWEBVTT')).toBe('vtt');
    expect(detectFormat('1\n00:00:01,000 --> 00:00:02,000\nA')).toBe('srt');
    expect(parseSubtitles(VTT).cues).toHaveLength(2);
    expect(parseSubtitles(SRT).cues).toHaveLength(2);
  });

  it('refuses NUL characters naming the line', () => {
    expect(failure(() => parseSubtitles('1\n00:00:01,000 --> 00:00:02,000\nA\0')).line).toBe(3);
  });

  it('decodes UTF-8 with and without BOM, UTF-16 with BOM, else Windows-1252', () => {
    expect(decodeSubtitleBytes(Buffer.from('\uFEFFWEBVTT é', 'utf8'))).toBe('WEBVTT é');
    expect(decodeSubtitleBytes(Buffer.from('héllo', 'utf8'))).toBe('héllo');
    expect(decodeSubtitleBytes(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('WEBVTT é', 'utf16le')]))).toBe('WEBVTT é');
    const be = Buffer.from('hé', 'utf16le').swap16();
    expect(decodeSubtitleBytes(Buffer.concat([Buffer.from([0xfe, 0xff]), be]))).toBe('hé');
    expect(decodeSubtitleBytes(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x93, 0x78, 0x94]))).toBe('café “x”');
  });

  it('formats timestamps with at least two hour digits', () => {
    expect(formatTimestamp(0)).toBe('00:00:00.000');
    expect(formatTimestamp(3_723_004, ',')).toBe('01:02:03,004');
    expect(formatTimestamp(360_000_000)).toBe('100:00:00.000');
  });

  it('writes SRT as VTT (escaping -->) and parses it back to the same cues', () => {
    const subs = parseSrt('1\n00:00:01,000 --> 00:00:02,000\nA --> B\n\n2\n01:00:00,5 --> 01:00:01,000\n<i>x</i>');
    const vtt = toVtt(subs);
    expect(vtt).toBe('WEBVTT\n\n1\n00:00:01.000 --> 00:00:02.000\nA --&gt; B\n\n2\n01:00:00.500 --> 01:00:01.000\n<i>x</i>\n');
    expect(parseVtt(vtt).cues.map((c) => [c.start, c.end])).toEqual(subs.cues.map((c) => [c.start, c.end]));
  });

  it('round-trips VTT with blocks and settings', () => {
    const subs = parseVtt(VTT);
    const again = parseVtt(toVtt(subs));
    expect(again).toEqual(subs);
  });

  it('writes SRT with counters, , millis and only SRT markup', () => {
    const srt = toSrt(parseVtt(VTT));
    expect(srt).toBe('1\n00:00:01,000 --> 00:00:04,000\nHello & welcome\n\n2\n01:00:05,250 --> 01:00:07,000\nLine one\nLine two\n');
    expect(parseSrt(srt).cues).toHaveLength(2);
  });

  it('derives plain and formatted text', () => {
    const subs = parseVtt(
      'WEBVTT\n\n00:01.000 --> 00:02.000\n<v Bob><i>Hi</i> &lt;there&gt;</v>\nyou\n\n00:02.000 --> 00:03.000\n<v Bob><i>Hi</i> &lt;there&gt;</v>\nyou\n\n00:03.000 --> 00:04.000\nBye',
    );
    expect(toPlainText(subs)).toBe('Hi <there> you\nBye');
    expect(toFormattedText(subs)).toBe('<v Bob><i>Hi</i> &lt;there&gt;</v>\nyou\n\n<v Bob><i>Hi</i> &lt;there&gt;</v>\nyou\n\nBye');
    expect(plainCueText('<c.yellow>a</c>&nbsp;b')).toBe('a\u00a0b');
  });

  it('keeps SRT markup, drops VTT-only tags and karaoke timestamps', () => {
    const subs = parseVtt(
      'WEBVTT\n\n00:01.000 --> 00:02.000\n<v.a Bob><b.loud>x</b> <c.y>z</c> <00:00:01.500>w <font color="red">r</font> <ruby>a<rt>b</rt></ruby>',
    );
    expect(toSrt(subs)).toBe('1\n00:00:01,000 --> 00:00:02,000\n<b>x</b> z w <font color="red">r</font> ab\n');
  });

  it('stays linear on hostile input (many "<" without ">", long whitespace runs)', () => {
    const started = Date.now();
    const many = '<'.repeat(300_000);
    expect(plainCueText(many)).toBe(many);
    const subs = parseSrt(`1\n00:00:01,000 --> 00:00:02,000${' '.repeat(500_000)}\n<v ${'<v '.repeat(100_000)}x\n`);
    expect(toSrt(subs).length).toBeGreaterThan(0);
    expect(parseSrt(`1\n00:00:01,000 --> 00:00:02,000${' '.repeat(500_000)}X1:1\nA`).cues[0].text).toBe('A');
    expect(failure(() => parseSrt(`1\n00:00:01,000${' '.repeat(500_000)}x --> 00:00:02,000\nA`)).line).toBe(2);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

import { describe, expect, it } from 'vitest';
import { aacSampleRate, audioTagInfo, avcPictureSize, flvHeader, flvTag, parseSps, videoTagInfo } from '../../src/live/flv.ts';
import { composePlaylist, parseMediaPlaylist, windowSegments, type PartPlaylist } from '../../src/live/hls-playlist.ts';
import { FeedHealth } from '../../src/live/health.ts';

/** SPS NAL units written by x264 for the given sizes. */
const SPS: Array<[string, string, number, number]> = [
  ['high 4:2:0', '6764001eacd940a02ff970110000030001000003003c0f162d96', 640, 360],
  ['main 1080p (cropped)', '674d4028eca03c0113f2e022000003000200000300781e30632c', 1920, 1080],
  ['odd size', '6764001eacd940a42fe224c044000003000400000300f03c58b658', 642, 362],
  ['baseline', '6742c00dd90141fb0110000003001000000303c0f142a480', 320, 240],
  ['high 4:4:4', '67f4001e919b281405ff138088000003000800000301e078b16cb0', 640, 360],
  ['interlaced', '6764001facd940b424d80880000003008000001e0f8b16cb', 720, 576],
];

describe('FLV and codec facts', () => {
  it.each(SPS)('reads the picture size from an H.264 SPS (%s)', (_name, hex, width, height) => {
    expect(parseSps(Buffer.from(hex, 'hex'))).toEqual({ width, height });
  });

  it('reads the size from an AVC sequence header tag, and tells tags apart', () => {
    const sps = Buffer.from(SPS[0][1], 'hex');
    const record = Buffer.concat([Buffer.from([1, 0x64, 0, 0x1e, 0xff, 0xe1, 0, sps.length]), sps, Buffer.from([1, 0, 0])]);
    const config = Buffer.concat([Buffer.from([0x17, 0, 0, 0, 0]), record]);
    expect(avcPictureSize(config)).toEqual({ width: 640, height: 360 });
    expect(videoTagInfo(config)).toEqual({ codec: 'h264', keyframe: true, isConfig: true, isFrame: false });
    expect(videoTagInfo(Buffer.from([0x27, 1, 0, 0, 0, 9]))).toEqual({ codec: 'h264', keyframe: false, isConfig: false, isFrame: true });
    expect(avcPictureSize(Buffer.from([0x17, 0, 0, 0, 0, 1]))).toBeNull();
    // Enhanced RTMP (FourCC).
    expect(videoTagInfo(Buffer.concat([Buffer.from([0x91]), Buffer.from('hvc1'), Buffer.alloc(4)])).codec).toBe('hevc');
  });

  it('reads AAC sample rates from the AudioSpecificConfig, and codec names from tags', () => {
    expect(aacSampleRate(Buffer.from([0xaf, 0x00, 0x12, 0x10]))).toBe(44100); // AAC-LC 44.1 kHz stereo
    expect(aacSampleRate(Buffer.from([0xaf, 0x00, 0x11, 0x90]))).toBe(48000);
    expect(audioTagInfo(Buffer.from([0xaf, 0x00, 0x12, 0x10]))).toMatchObject({ codec: 'aac', isConfig: true });
    expect(audioTagInfo(Buffer.from([0x2f, 0xff])).codec).toBe('mp3');
  });

  it('writes FLV headers and tags with 32-bit timestamps', () => {
    expect(flvHeader(true, true).toString('hex')).toBe('464c5601050000000900000000');
    const tag = flvTag(9, 0x12345678, Buffer.from([1, 2, 3]));
    expect(tag.length).toBe(11 + 3 + 4);
    expect(tag.readUIntBE(4, 3)).toBe(0x345678);
    expect(tag[7]).toBe(0x12);
    expect(tag.readUInt32BE(14)).toBe(14);
  });
});

describe('feed health', () => {
  it('measures frame rate and bit rates from media timestamps over the window', () => {
    const health = new FeedHealth(5000);
    health.onMetadata({ width: 1, height: 1, videocodecid: 7, audiocodecid: 10 });
    const sps = Buffer.from(SPS[0][1], 'hex');
    const record = Buffer.concat([Buffer.from([1, 0x64, 0, 0x1e, 0xff, 0xe1, 0, sps.length]), sps]);
    const start = 1_000_000;
    health.onVideo(0, Buffer.concat([Buffer.from([0x17, 0, 0, 0, 0]), record]), start);
    health.onAudio(0, Buffer.from([0xaf, 0x00, 0x12, 0x10]), start);
    // 3 s of 25 fps video at 100 kB/s... i.e. 4000 bytes a frame = 800 kb/s; AAC frames of 23.2 ms at 64 kb/s.
    for (let i = 0; i < 75; i++)
      health.onVideo(i * 40, Buffer.concat([Buffer.from([i % 25 === 0 ? 0x17 : 0x27, 1, 0, 0, 0]), Buffer.alloc(3995)]), start + i * 40);
    for (let i = 0; i < 129; i++) health.onAudio(Math.round(i * 23.22), Buffer.concat([Buffer.from([0xaf, 1]), Buffer.alloc(184)]), start + i * 23);
    const s = health.sample(start + 3000)!;
    expect(s).toMatchObject({
      video_codec_name: 'h264',
      video_width: 640,
      video_height: 360,
      video_r_frame_rate: 25,
      audio_codec_name: 'aac',
      audio_sample_rate: 44100,
    });
    expect(s.video_bit_rate! / 800_000).toBeCloseTo(1, 1);
    expect(s.audio_bit_rate! / 64_000).toBeCloseTo(1, 1);
    expect(s.created_at).toBe(new Date(start + 3000).toISOString());
    // Nothing arrived for longer than the window: no sample.
    expect(health.sample(start + 9000)).toBeNull();
  });
});

describe('HLS playlist', () => {
  const part = (name: string, n: number, ended = false): PartPlaylist => ({
    name,
    segments: Array.from({ length: n }, (_, i) => ({ duration: 4, uri: `s${String(i).padStart(5, '0')}.ts` })),
    ended,
  });

  it('parses what the packager writes', () => {
    const text =
      '#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-TARGETDURATION:4\n#EXTINF:4.000000,\n#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00.000+0000\ns00000.ts\n#EXTINF:3.5,\ns00001.ts\n#EXT-X-ENDLIST\n';
    expect(parseMediaPlaylist(text)).toEqual({
      segments: [
        { duration: 4, uri: 's00000.ts', programDateTime: '2026-01-01T00:00:00.000+0000' },
        { duration: 3.5, uri: 's00001.ts' },
      ],
      ended: true,
    });
  });

  it('with DVR lists the whole broadcast as an EVENT playlist, parts joined by discontinuities', () => {
    const text = composePlaylist([part('p0001', 3, true), part('p0002', 2)], { dvr: true, ended: false, segmentLength: 4 });
    expect(text).toContain('#EXT-X-PLAYLIST-TYPE:EVENT');
    expect(text).toContain('#EXT-X-MEDIA-SEQUENCE:0');
    expect(text.match(/#EXTINF/g)).toHaveLength(5);
    expect(text).toMatch(/p0001\/s00002\.ts\n#EXT-X-DISCONTINUITY\n#EXTINF:4\.000000,\np0002\/s00000\.ts/);
    expect(text).not.toContain('#EXT-X-ENDLIST');
  });

  it('without DVR slides a short window at the live edge, keeping sequence numbers', () => {
    expect(windowSegments(4)).toBe(6);
    expect(windowSegments(10)).toBe(4);
    const text = composePlaylist([part('p0001', 8, true), part('p0002', 3)], { dvr: false, ended: true, segmentLength: 4 });
    expect(text.match(/#EXTINF/g)).toHaveLength(6);
    expect(text).toContain('#EXT-X-MEDIA-SEQUENCE:5');
    expect(text).not.toContain('#EXT-X-DISCONTINUITY-SEQUENCE');
    expect(text).not.toContain('PLAYLIST-TYPE');
    expect(text.trim().endsWith('#EXT-X-ENDLIST')).toBe(true);
    // Once the discontinuity scrolls out of the window it is counted.
    const later = composePlaylist([part('p0001', 8, true), part('p0002', 9)], { dvr: false, ended: false, segmentLength: 4 });
    expect(later).toContain('#EXT-X-MEDIA-SEQUENCE:11');
    expect(later).toContain('#EXT-X-DISCONTINUITY-SEQUENCE:1');
    expect(later).not.toContain('#EXT-X-DISCONTINUITY\n');
  });
});

/**
 * FLV tags (what RTMP audio/video messages carry) and the codec facts the ingest reads from them:
 * codec names, the H.264 picture size from the SPS, the AAC sample rate. Nothing is decoded or
 * re-encoded; tags are written unchanged into the FLV stream the HLS packager remuxes.
 */

/** The 9-byte FLV header and the first (zero) PreviousTagSize. */
export function flvHeader(hasAudio: boolean, hasVideo: boolean): Buffer {
  const b = Buffer.alloc(13);
  b.write('FLV', 0, 'latin1');
  b[3] = 1;
  b[4] = (hasAudio ? 4 : 0) | (hasVideo ? 1 : 0);
  b.writeUInt32BE(9, 5);
  return b;
}

/** One FLV tag: type (8 audio, 9 video, 18 script), 32-bit millisecond timestamp, body. */
export function flvTag(type: number, timestamp: number, body: Buffer): Buffer {
  const head = Buffer.alloc(11);
  head[0] = type;
  head.writeUIntBE(body.length, 1, 3);
  head.writeUIntBE(timestamp & 0xffffff, 4, 3);
  head[7] = (timestamp >>> 24) & 0xff;
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(11 + body.length, 0);
  return Buffer.concat([head, body, tail]);
}

const VIDEO_CODECS: Record<number, string> = { 2: 'flv1', 3: 'flashsv', 4: 'vp6f', 5: 'vp6a', 6: 'flashsv2', 7: 'h264', 12: 'hevc', 13: 'av1' };
const FOURCC_CODECS: Record<string, string> = { avc1: 'h264', hvc1: 'hevc', av01: 'av1', vp09: 'vp9' };
const AUDIO_CODECS: Record<number, string> = {
  0: 'pcm',
  1: 'adpcm_swf',
  2: 'mp3',
  3: 'pcm_s16le',
  4: 'nellymoser',
  5: 'nellymoser',
  6: 'nellymoser',
  7: 'pcm_alaw',
  8: 'pcm_mulaw',
  10: 'aac',
  11: 'speex',
  14: 'mp3',
};
const AAC_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];
const FLV_RATES = [5512, 11025, 22050, 44100];

export interface VideoTagInfo {
  codec: string | null;
  keyframe: boolean;
  /** A decoder configuration record (sequence header), not a picture. */
  isConfig: boolean;
  /** Picture data (counts as a frame). */
  isFrame: boolean;
}

export function videoTagInfo(body: Buffer): VideoTagInfo {
  const b0 = body[0] ?? 0;
  if (b0 & 0x80) {
    // Enhanced RTMP: [isEx:1][frameType:3][packetType:4] then a FourCC.
    const frameType = (b0 >> 4) & 0x07;
    const packetType = b0 & 0x0f;
    const fourcc = body.length >= 5 ? body.toString('latin1', 1, 5) : '';
    return {
      codec: FOURCC_CODECS[fourcc] ?? (fourcc || null),
      keyframe: frameType === 1,
      isConfig: packetType === 0,
      isFrame: packetType === 1 || packetType === 3,
    };
  }
  const frameType = b0 >> 4;
  const codecId = b0 & 0x0f;
  const codec = VIDEO_CODECS[codecId] ?? null;
  if (codecId === 7 || codecId === 12 || codecId === 13) {
    const packetType = body[1] ?? 0xff;
    return { codec, keyframe: frameType === 1, isConfig: packetType === 0, isFrame: packetType === 1 };
  }
  return { codec, keyframe: frameType === 1, isConfig: false, isFrame: frameType !== 5 };
}

export interface AudioTagInfo {
  codec: string | null;
  isConfig: boolean;
  /** The rate the FLV tag header claims (AAC always claims 44.1 kHz; the config has the real one). */
  flvRate: number;
}

export function audioTagInfo(body: Buffer): AudioTagInfo {
  const b0 = body[0] ?? 0;
  const format = b0 >> 4;
  return { codec: AUDIO_CODECS[format] ?? null, isConfig: format === 10 && body[1] === 0, flvRate: FLV_RATES[(b0 >> 2) & 3] };
}

/** Sample rate from an AAC AudioSpecificConfig (the body of an AAC sequence header tag). */
export function aacSampleRate(body: Buffer): number | null {
  if (body.length < 4) return null;
  const asc = body.subarray(2);
  const r = new BitReader(asc);
  try {
    let objectType = r.bits(5);
    if (objectType === 31) objectType = 32 + r.bits(6);
    const index = r.bits(4);
    if (index === 15) return r.bits(24);
    return AAC_RATES[index] ?? null;
  } catch {
    return null;
  }
}

/** Width and height from an H.264 sequence header tag (AVCDecoderConfigurationRecord). */
export function avcPictureSize(body: Buffer): { width: number; height: number } | null {
  // body: [frame/codec][packetType][cts x3] then the record.
  const rec = body.subarray(5);
  if (rec.length < 8) return null;
  const spsCount = rec[5] & 0x1f;
  if (spsCount < 1) return null;
  const spsLength = rec.readUInt16BE(6);
  if (rec.length < 8 + spsLength) return null;
  try {
    return parseSps(rec.subarray(8, 8 + spsLength));
  } catch {
    return null;
  }
}

class BitReader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}

  bit(): number {
    const byte = this.pos >> 3;
    if (byte >= this.buf.length) throw new Error('out of bits');
    const v = (this.buf[byte] >> (7 - (this.pos & 7))) & 1;
    this.pos++;
    return v;
  }

  bits(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 2 + this.bit();
    return v;
  }

  ue(): number {
    let zeros = 0;
    while (this.bit() === 0) {
      if (++zeros > 31) throw new Error('bad exp-golomb');
    }
    return 2 ** zeros - 1 + this.bits(zeros);
  }

  se(): number {
    const k = this.ue();
    return k % 2 === 1 ? (k + 1) / 2 : -(k / 2);
  }
}

/** Removes emulation-prevention bytes (00 00 03 → 00 00). */
function rbsp(nal: Buffer): Buffer {
  const out: number[] = [];
  let zeros = 0;
  for (const byte of nal) {
    if (zeros >= 2 && byte === 3) {
      zeros = 0;
      continue;
    }
    out.push(byte);
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return Buffer.from(out);
}

const HIGH_PROFILES = new Set([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]);

/** The picture size an H.264 SPS NAL unit describes (cropping applied). */
export function parseSps(nal: Buffer): { width: number; height: number } {
  const r = new BitReader(rbsp(nal.subarray(1)));
  const profile = r.bits(8);
  r.bits(16); // constraint flags + level
  r.ue(); // seq_parameter_set_id
  let chromaFormat = 1;
  if (HIGH_PROFILES.has(profile)) {
    chromaFormat = r.ue();
    if (chromaFormat === 3) r.bit();
    r.ue();
    r.ue();
    r.bit();
    if (r.bit()) {
      for (let i = 0; i < (chromaFormat !== 3 ? 8 : 12); i++) {
        if (!r.bit()) continue;
        const size = i < 6 ? 16 : 64;
        let last = 8;
        let next = 8;
        for (let j = 0; j < size; j++) {
          if (next !== 0) next = (last + r.se() + 256) % 256;
          last = next === 0 ? last : next;
        }
      }
    }
  }
  r.ue(); // log2_max_frame_num_minus4
  const pocType = r.ue();
  if (pocType === 0) r.ue();
  else if (pocType === 1) {
    r.bit();
    r.se();
    r.se();
    const n = r.ue();
    for (let i = 0; i < n; i++) r.se();
  }
  r.ue(); // max_num_ref_frames
  r.bit();
  const widthMbs = r.ue() + 1;
  const heightMapUnits = r.ue() + 1;
  const frameMbsOnly = r.bit();
  if (!frameMbsOnly) r.bit();
  r.bit();
  let [left, right, top, bottom] = [0, 0, 0, 0];
  if (r.bit()) [left, right, top, bottom] = [r.ue(), r.ue(), r.ue(), r.ue()];
  const subWidth = chromaFormat === 1 || chromaFormat === 2 ? 2 : 1;
  const subHeight = chromaFormat === 1 ? 2 : 1;
  const cropX = chromaFormat === 0 ? 1 : subWidth;
  const cropY = (chromaFormat === 0 ? 1 : subHeight) * (2 - frameMbsOnly);
  return {
    width: widthMbs * 16 - cropX * (left + right),
    height: (2 - frameMbsOnly) * heightMapUnits * 16 - cropY * (top + bottom),
  };
}

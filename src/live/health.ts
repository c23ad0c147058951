import type { AmfObject } from './amf.ts';
import { aacSampleRate, audioTagInfo, avcPictureSize, videoTagInfo } from './flv.ts';

/** The health of one incoming feed, as the API answers it (spec "Live stream health"). */
export interface HealthSample {
  video_codec_name: string | null;
  video_width: number | null;
  video_height: number | null;
  video_r_frame_rate: number | null;
  video_bit_rate: number | null;
  audio_codec_name: string | null;
  audio_sample_rate: number | null;
  audio_bit_rate: number | null;
  created_at: string;
}

interface Tag {
  kind: 'v' | 'a';
  /** Media timestamp, ms. */
  ts: number;
  bytes: number;
  /** Wall clock of arrival, ms. */
  at: number;
  frame: boolean;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null);

const META_VIDEO_CODECS: Record<string, string> = { '2': 'flv1', '4': 'vp6f', '7': 'h264', '12': 'hevc', avc1: 'h264', hvc1: 'hevc', av01: 'av1', vp09: 'vp9' };
const META_AUDIO_CODECS: Record<string, string> = { '2': 'mp3', '10': 'aac', '11': 'speex', mp4a: 'aac', '.mp3': 'mp3', Opus: 'opus' };

/**
 * Measures a feed from what actually arrives: codecs and picture size from the codec configuration,
 * frame rate and bit rates from the tags of the last few seconds (media timestamps, so a burst of
 * buffered data does not inflate them). The publisher's metadata fills in what cannot be measured yet.
 */
export class FeedHealth {
  private metadata: AmfObject = {};
  private videoCodec: string | null = null;
  private audioCodec: string | null = null;
  private size: { width: number; height: number } | null = null;
  private sampleRate: number | null = null;
  private tags: Tag[] = [];
  private head = 0;

  constructor(private readonly windowMs = 5000) {}

  onMetadata(metadata: AmfObject) {
    this.metadata = metadata;
  }

  onVideo(ts: number, body: Buffer, at = Date.now()) {
    const info = videoTagInfo(body);
    if (info.codec) this.videoCodec = info.codec;
    if (info.isConfig && info.codec === 'h264') this.size = avcPictureSize(body) ?? this.size;
    this.push({ kind: 'v', ts, bytes: body.length, at, frame: info.isFrame });
  }

  onAudio(ts: number, body: Buffer, at = Date.now()) {
    const info = audioTagInfo(body);
    if (info.codec) this.audioCodec = info.codec;
    if (info.isConfig) this.sampleRate = aacSampleRate(body) ?? this.sampleRate;
    else if (info.codec && info.codec !== 'aac' && this.sampleRate === null) this.sampleRate = info.flvRate;
    this.push({ kind: 'a', ts, bytes: body.length, at, frame: !info.isConfig });
  }

  private push(tag: Tag) {
    this.tags.push(tag);
    // Drop what fell out of the window (amortised: compact now and then).
    const cutoff = tag.at - this.windowMs;
    while (this.head < this.tags.length && this.tags[this.head].at < cutoff) this.head++;
    if (this.head > 1024) {
      this.tags = this.tags.slice(this.head);
      this.head = 0;
    }
  }

  /** Frames per second and bits per second of one kind over the window. */
  private rates(kind: 'v' | 'a', now: number): { fps: number | null; bps: number | null } {
    let count = 0;
    let bytes = 0;
    let min = Infinity;
    let max = -Infinity;
    for (let i = this.head; i < this.tags.length; i++) {
      const t = this.tags[i];
      if (t.kind !== kind || !t.frame || t.at < now - this.windowMs) continue;
      count++;
      bytes += t.bytes;
      if (t.ts < min) min = t.ts;
      if (t.ts > max) max = t.ts;
    }
    if (count < 2 || max <= min) return { fps: null, bps: null };
    const fps = ((count - 1) * 1000) / (max - min);
    // The frames cover the span plus one frame's duration.
    const seconds = (max - min) / 1000 + 1 / fps;
    return { fps, bps: Math.round((bytes * 8) / seconds) };
  }

  /** True when something arrived within the window. */
  isArriving(now = Date.now()): boolean {
    const last = this.tags[this.tags.length - 1];
    return last !== undefined && last.at >= now - this.windowMs;
  }

  sample(now = Date.now()): HealthSample | null {
    if (!this.isArriving(now)) return null;
    const m = this.metadata;
    const video = this.rates('v', now);
    const audio = this.rates('a', now);
    const metaVideo = typeof m.videocodecid === 'number' || typeof m.videocodecid === 'string' ? (META_VIDEO_CODECS[String(m.videocodecid)] ?? null) : null;
    const metaAudio = typeof m.audiocodecid === 'number' || typeof m.audiocodecid === 'string' ? (META_AUDIO_CODECS[String(m.audiocodecid)] ?? null) : null;
    const metaFps = num(m.framerate) ?? num(m.fps);
    const metaVideoRate = num(m.videodatarate);
    const metaAudioRate = num(m.audiodatarate);
    const hasVideo = this.videoCodec !== null || metaVideo !== null;
    const hasAudio = this.audioCodec !== null || metaAudio !== null;
    const round = (v: number | null) => (v === null ? null : Math.round(v));
    return {
      video_codec_name: this.videoCodec ?? metaVideo,
      video_width: hasVideo ? (this.size?.width ?? round(num(m.width))) : null,
      video_height: hasVideo ? (this.size?.height ?? round(num(m.height))) : null,
      video_r_frame_rate: hasVideo ? round(video.fps ?? metaFps) : null,
      video_bit_rate: hasVideo ? (video.bps ?? (metaVideoRate === null ? null : Math.round(metaVideoRate * 1000))) : null,
      audio_codec_name: this.audioCodec ?? metaAudio,
      audio_sample_rate: hasAudio ? (this.sampleRate ?? round(num(m.audiosamplerate))) : null,
      audio_bit_rate: hasAudio ? (audio.bps ?? (metaAudioRate === null ? null : Math.round(metaAudioRate * 1000))) : null,
      created_at: new Date(now).toISOString(),
    };
  }
}

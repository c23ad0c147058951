/**
 * Live bench (`node --import tsx bench/live.ts`, or `runLiveBench()` from another bench):
 *
 * 1. Glass-to-playlist latency: ffmpeg publishes a real-time (-re) 640x360 30 fps H.264/AAC stream
 *    (keyframe every second) to the RTMP ingest; for every HLS segment, the time from the publish of
 *    its first frame (the publisher's real-time origin, min(arrival − timestamp) over all tags, + the
 *    frame's timestamp) to the segment being
 *    listed in the viewers' playlist (the part's index published in the file store, from which every
 *    process composes the playlist: here the local store, watched with inotify; checked against the
 *    route at the end), as a ratio of segment_length. A segment can only be listed once
 *    it is complete and stored, so the floor is 1.0 (plus the wait for the next keyframe); target ≤ 1.5.
 * 2. CPU per stream: the ingest's Node process (process.cpuUsage: RTMP parsing, health sampling,
 *    database heartbeats; next to the same process idle) and its HLS packager (the ffmpeg child,
 *    -c copy; from /proc), per second of media in the steady state (between the first and the last
 *    segment listed) and over the whole broadcast, next to what merely decoding the same media costs
 *    and what transcoding it once does (libx264 veryfast, the cheapest real transcode). Remux only:
 *    target packager ≤ 10 % of that transcode (and below the decode-only floor).
 *
 * Knobs: LIVE_BENCH_SEGMENTS (default "1,4"), LIVE_BENCH_SECONDS (default: 4 segments + 4 s).
 * BENCH_STRICT=1 exits 1 on FAIL when run directly.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readPart } from '../src/live/hls-index.ts';
import { publish } from '../test/helpers/rtmp.ts';
import { startLiveServer } from './live-server.ts';
import { parseMediaPlaylist } from '../src/live/hls-playlist.ts';
import { buildRecording } from '../src/live/recording.ts';

const self = fileURLToPath(import.meta.url);
const SEGMENTS = (process.env.LIVE_BENCH_SEGMENTS ?? '1,4')
  .split(',')
  .map(Number)
  .filter((n) => [1, 4, 10].includes(n));
const TARGET_LATENCY_RATIO = 1.5;
const TARGET_REMUX_SHARE = 0.1;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface LiveBenchSegmentResult {
  segment_length: number;
  media_seconds: number;
  segments_measured: number;
  /** Publish of a segment's first frame → listed in the playlist, seconds (mean, max). */
  latency_first_frame_s: { mean: number; max: number };
  /** The same for the segment's last frame: the packaging delay once the segment is complete. */
  latency_last_frame_s: { mean: number; max: number };
  latency_ratio: number;
  /** Steady state (between the first and last segment listed). */
  ingest_node_cpu_s_per_media_s: number;
  /** Whole broadcast, publisher connect to packager exit. */
  ingest_node_cpu_s_per_media_s_with_startup: number;
  packager_cpu_s_per_media_s: number;
  packager_cpu_s_per_media_s_with_startup: number;
  transcode_cpu_s_per_media_s: number;
  /** Decoding the same media without encoding: the floor of any transcode. */
  decode_cpu_s_per_media_s: number;
  /** This process with nothing to do (timers, the TypeScript loader), measured before publishing. */
  idle_node_cpu_s_per_s: number;
  /** steady packager CPU / transcode CPU */
  remux_share: number;
  pass: boolean;
}

export interface LiveBenchResult {
  cores: number;
  results: LiveBenchSegmentResult[];
  pass: boolean;
}

/** CPU seconds of a command, exactly: the shell that waited for it reports its children's times. */
function childCpu(binary: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', '"$0" "$@" >/dev/null 2>&1; cat /proc/$$/stat', binary, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', () => {
      const fields = out
        .slice(out.lastIndexOf(')') + 2)
        .trim()
        .split(' ');
      // cutime, cstime: fields 16 and 17 (13 and 14 after the command name).
      resolve((Number(fields[13]) + Number(fields[14])) / 100);
    });
  });
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

async function benchOne(segmentLength: number): Promise<LiveBenchSegmentResult> {
  const server = await startLiveServer('live', { env: { LIVE_RECONNECT_WINDOW_SECONDS: '1', LIVE_HEALTH_INTERVAL_SECONDS: '5' } });
  const { config, container, app, ingest } = server;
  const dataDir = config.dataDir;
  const store = container.media.store;
  try {
    const { id, details: d } = await server.createInstance({ name: 'bench', segmentLength: segmentLength as 1 | 4 | 10, dvr: true });
    const seconds = Number(process.env.LIVE_BENCH_SECONDS ?? segmentLength * 4 + 4);

    await sleep(2000); // let start-up work (JIT, GC) settle before measuring idle
    const idleFrom = process.cpuUsage();
    const idleStart = Date.now();
    await sleep(2000);
    const idleUsage = process.cpuUsage(idleFrom);
    const idleNode = (idleUsage.user + idleUsage.system) / 1e6 / ((Date.now() - idleStart) / 1000);
    const cpuBefore = process.cpuUsage();
    const pub = publish(config.ffmpegPath, `${d.ingest_url}/${d.stream_key}`, seconds, { kbps: 800, constant: false }).proc;
    const exited = new Promise((r) => pub.once('exit', r));
    // The viewers' playlist is composed, on each request and by any process, from the part's index in
    // the file store: a segment is listed from the moment that index (renamed into place by the local
    // store, after the segment) names it. Watched with inotify, so that the bench itself costs next to
    // no CPU in this process.
    const listedAt = new Map<string, number>();
    const partDir = path.join(config.mediaDir, 'live', d.player_uuid, 'p0001');
    // Steady state: CPU between the first and the last segment listed (start-up costs, such as
    // spawning the packager, excluded), per second of wall time = per second of media (-re).
    type Mark = { at: number; node: NodeJS.CpuUsage; packager: number };
    const marks: Mark[] = [];
    const note = async () => {
      const now = Date.now();
      try {
        let added = false;
        for (const s of (await readPart(store, d.player_uuid, 'p0001'))?.segments ?? []) {
          if (!listedAt.has(s.uri)) {
            listedAt.set(s.uri, now);
            added = true;
          }
        }
        if (added && !done) marks.push({ at: now, node: process.cpuUsage(), packager: ingest.stats(id)?.packagerCpuSeconds ?? 0 });
      } catch {
        // not written yet
      }
    };
    let done = false;
    void exited.then(() => (done = true));
    while (!done && !fs.existsSync(partDir)) await sleep(20);
    const watcher = fs.watch(partDir, (_event, name) => {
      if (name === 'index.json') void note();
    });
    while (!done) await sleep(100);
    const firstFrameAt = ingest.stats(id)?.firstFrameAt ?? null;
    watcher.close();
    const statsBefore = ingest.stats(id);
    // Let the window pass so the packager's last segment and CPU reading are final.
    await sleep(2500);
    const nodeCpu = process.cpuUsage(cpuBefore);
    const packagerCpu = ingest.stats(id)?.packagerCpuSeconds ?? statsBefore?.packagerCpuSeconds ?? 0;

    // Media time of each segment from the part's published index (complete now).
    const segments = (await readPart(store, d.player_uuid, 'p0001'))?.segments ?? [];
    // The route lists exactly what was published.
    // As a viewer fetches it: with the playback grant the watch page hands out.
    const page = (await app.inject({ method: 'GET', url: `/watch/${d.player_uuid}` })).body;
    const playlistPath = /\/play\/[^"/]+\/[^"/]+\/live\/index\.m3u8/.exec(page)?.[0];
    if (!playlistPath) throw new Error('the watch page names no live playlist');
    const served = parseMediaPlaylist((await app.inject({ method: 'GET', url: playlistPath })).body).segments.map((s) => s.uri);
    if (served.join() !== segments.map((s) => `p0001/${s.uri}`).join()) throw new Error('the served playlist differs from the packager output');
    const first: number[] = [];
    const last: number[] = [];
    let start = 0;
    for (const s of segments.slice(0, -1)) {
      // The final segment is flushed when the publisher stops, not when it is complete: left out.
      const at = listedAt.get(s.uri);
      if (at !== undefined && firstFrameAt !== null) {
        first.push((at - (firstFrameAt + start * 1000)) / 1000);
        last.push((at - (firstFrameAt + (start + s.duration) * 1000)) / 1000);
      }
      start += s.duration;
    }
    const mediaSeconds = segments.reduce((a, s) => a + s.duration, 0);

    // What one transcode of the same media costs (the cheapest real one: libx264 veryfast, same size).
    const recording = path.join(dataDir, 'recording.mp4');
    await buildRecording({ ffmpegPath: config.ffmpegPath, store, playerUuid: d.player_uuid, workDir: dataDir, output: recording });
    const transcodeCpu = await childCpu(config.ffmpegPath, [
      '-nostdin',
      '-y',
      '-i',
      recording,
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-b:v',
      '800k',
      '-c:a',
      'aac',
      '-b:a',
      '96k',
      '-f',
      'mp4',
      path.join(dataDir, 'transcoded.mp4'),
    ]);
    // Decoding alone (no encoding) is the floor of any transcode.
    const decodeCpu = await childCpu(config.ffmpegPath, ['-nostdin', '-i', recording, '-f', 'null', '-']);

    const steady = marks.length >= 2 ? { seconds: (marks[marks.length - 1].at - marks[0].at) / 1000, from: marks[0], to: marks[marks.length - 1] } : null;
    const steadyNode = steady ? (steady.to.node.user + steady.to.node.system - steady.from.node.user - steady.from.node.system) / 1e6 / steady.seconds : NaN;
    const steadyPackager = steady ? (steady.to.packager - steady.from.packager) / steady.seconds : NaN;
    const latencyRatio = mean(first) / segmentLength;
    const packagerPerSecond = packagerCpu / mediaSeconds;
    const transcodePerSecond = transcodeCpu / mediaSeconds;
    // Steady-state remux against one transcode of the same media.
    const remuxShare = steadyPackager / transcodePerSecond;
    return {
      segment_length: segmentLength,
      media_seconds: round(mediaSeconds, 2),
      segments_measured: first.length,
      latency_first_frame_s: { mean: round(mean(first)), max: round(Math.max(...first)) },
      latency_last_frame_s: { mean: round(mean(last)), max: round(Math.max(...last)) },
      latency_ratio: round(latencyRatio),
      ingest_node_cpu_s_per_media_s: round(steadyNode, 4),
      ingest_node_cpu_s_per_media_s_with_startup: round((nodeCpu.user + nodeCpu.system) / 1e6 / mediaSeconds, 4),
      packager_cpu_s_per_media_s: round(steadyPackager, 4),
      packager_cpu_s_per_media_s_with_startup: round(packagerPerSecond, 4),
      transcode_cpu_s_per_media_s: round(transcodePerSecond, 4),
      decode_cpu_s_per_media_s: round(decodeCpu / mediaSeconds, 4),
      idle_node_cpu_s_per_s: round(idleNode, 4),
      remux_share: round(remuxShare),
      pass: first.length > 0 && latencyRatio <= TARGET_LATENCY_RATIO && remuxShare <= TARGET_REMUX_SHARE,
    };
  } finally {
    await server.close();
  }
}

export async function runLiveBench(): Promise<LiveBenchResult> {
  const results: LiveBenchSegmentResult[] = [];
  for (const segmentLength of SEGMENTS) results.push(await benchOne(segmentLength));
  return { cores: os.cpus().length, results, pass: results.every((r) => r.pass) };
}

/** Prints one line per segment length: latency ratio and the ingest's CPU, remux against transcode. */
export function printLiveBench(result: LiveBenchResult): void {
  console.log('\nLive ingest');
  for (const r of result.results) {
    console.log(
      `segment_length ${r.segment_length}s: latency ${r.latency_first_frame_s.mean}s = ${r.latency_ratio}× segment (target ≤ ${TARGET_LATENCY_RATIO}); ` +
        `CPU per media second: node ${r.ingest_node_cpu_s_per_media_s}s (idle ${r.idle_node_cpu_s_per_s}s), packager ${r.packager_cpu_s_per_media_s}s vs decode ${r.decode_cpu_s_per_media_s}s, transcode ${r.transcode_cpu_s_per_media_s}s ` +
        `(${(r.remux_share * 100).toFixed(1)} %, target ≤ ${TARGET_REMUX_SHARE * 100} %) ${r.pass ? 'PASS' : 'FAIL'}`,
    );
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === self) {
  runLiveBench().then(
    (result) => {
      console.log(JSON.stringify(result, null, 2));
      printLiveBench(result);
      if (process.env.BENCH_STRICT === '1' && !result.pass) process.exitCode = 1;
      process.exit();
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

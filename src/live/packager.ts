import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { flvHeader, flvTag } from './flv.ts';
import type { PartPublisher } from './hls-publisher.ts';

/**
 * One part of a broadcast's HLS output: an ffmpeg child that reads the publisher's FLV tags on stdin
 * and remuxes them (`-c copy`, no transcoding) into MPEG-TS segments of the instance's
 * segment_length and a playlist listing all of them, in a local folder; its publisher stores each
 * segment in the file store as soon as it is complete (src/live/hls-publisher.ts). A broadcast gets
 * a new part whenever its feed restarts (reconnect, failover to the backup); the playback route joins
 * the parts.
 */
export class HlsPart {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private started = false;
  private lastCpu = 0;
  private cpuTimer: NodeJS.Timeout | null = null;
  private stderrTail = '';
  /** Bytes handed to ffmpeg that it has not consumed yet; a stalled packager is stopped. */
  private static readonly MAX_BACKLOG = 64 * 1024 * 1024;

  readonly dir: string;

  constructor(
    private readonly ffmpegPath: string,
    private readonly publisher: PartPublisher,
    private readonly segmentLength: number,
    private readonly log?: { warn(obj: object, msg: string): void },
  ) {
    this.dir = publisher.dir;
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** CPU seconds (user + system) the ffmpeg child used so far (Linux; 0 elsewhere). */
  get cpuSeconds(): number {
    this.sampleCpu();
    return this.lastCpu;
  }

  private sampleCpu() {
    const pid = this.child?.pid;
    if (!pid) return;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime are fields 14 and 15 of the full line (11 and 12 after the command name).
      this.lastCpu = (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // Not Linux, or the process just ended: keep the last reading.
    }
  }

  /** Starts ffmpeg and writes the FLV header and the stream's configuration tags. */
  start(opts: { hasAudio: boolean; hasVideo: boolean; prelude: Buffer[] }): void {
    if (this.started) return;
    this.started = true;
    // Whatever an earlier process left here (it died) is not this part's.
    fs.rmSync(this.dir, { recursive: true, force: true });
    fs.mkdirSync(this.dir, { recursive: true });
    this.publisher.start();
    const args = [
      '-hide_banner',
      '-loglevel',
      'error',
      '-fflags',
      '+genpts',
      '-probesize',
      '500000',
      '-analyzeduration',
      '1000000',
      '-f',
      'flv',
      '-i',
      'pipe:0',
      '-map',
      '0',
      '-c',
      'copy',
      '-f',
      'hls',
      '-hls_time',
      String(this.segmentLength),
      '-hls_list_size',
      '0',
      '-hls_flags',
      'temp_file+independent_segments+program_date_time',
      '-hls_segment_filename',
      path.join(this.dir, 's%05d.ts'),
      path.join(this.dir, 'index.m3u8'),
    ];
    const child = spawn(this.ffmpegPath, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    this.child = child;
    child.stdin.on('error', () => {});
    child.stderr.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString()).slice(-2000);
    });
    this.cpuTimer = setInterval(() => this.sampleCpu(), 1000);
    this.cpuTimer.unref();
    this.exited = new Promise((resolve) => {
      child.on('error', (err) => {
        this.log?.warn({ err: err.message }, 'live: could not start the HLS packager');
        resolve();
      });
      child.on('close', (code) => {
        if (code && this.stderrTail) this.log?.warn({ code, stderr: this.stderrTail }, 'live: HLS packager ended with an error');
        if (this.cpuTimer) clearInterval(this.cpuTimer);
        this.child = null;
        resolve();
      });
    });
    this.write(flvHeader(opts.hasAudio, opts.hasVideo));
    for (const tag of opts.prelude) this.write(tag);
  }

  /** Tags are gathered and written once per event-loop turn: one pipe write for all that arrived. */
  private batch: Buffer[] = [];
  private flushScheduled = false;

  private write(data: Buffer) {
    this.batch.push(data);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush() {
    this.flushScheduled = false;
    const data = this.batch;
    this.batch = [];
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || data.length === 0) return;
    if (stdin.writableLength > HlsPart.MAX_BACKLOG) {
      this.log?.warn({ dir: this.dir }, 'live: HLS packager is not keeping up; stopping it');
      this.child?.kill('SIGKILL');
      return;
    }
    stdin.write(data.length === 1 ? data[0] : Buffer.concat(data));
  }

  writeTag(type: number, timestamp: number, body: Buffer) {
    this.write(flvTag(type, timestamp, body));
  }

  /** Ends the input; ffmpeg writes the last segment and closes the playlist, which are published. */
  async finish(timeoutMs = 10_000): Promise<void> {
    const child = this.child;
    if (child) {
      this.flush();
      this.sampleCpu();
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      timer.unref();
      await this.exited;
      clearTimeout(timer);
    } else {
      await this.exited;
    }
    if (this.started) await this.publisher.finish();
  }

  /** Stops at once (deleted stream, taken over): nothing more is written or published. */
  async kill(): Promise<void> {
    this.child?.kill('SIGKILL');
    await this.exited;
    if (this.started) await this.publisher.abandon();
  }
}

export { flvTag };

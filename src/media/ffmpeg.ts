import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';

/**
 * Runs ffmpeg and ffprobe. Children never outlive their job or this process:
 * - the job's AbortSignal kills the child with SIGKILL;
 * - every child still running when this process exits is killed with SIGKILL;
 * - on Linux the child is started through util-linux `setpriv --pdeathsig KILL` (an exec wrapper:
 *   same process, no extra one), so that the kernel kills it should this process die without
 *   running its exit handlers (SIGKILL, out of memory). Where setpriv is missing, the first two hold.
 */

const running = new Set<ChildProcess>();

process.once('exit', () => {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
});

let wrapper: string[] | undefined;

/** The exec wrapper that ties a child's life to ours (`setpriv --pdeathsig KILL --`), or none. */
export function deathSignalWrapper(): string[] {
  if (wrapper === undefined) {
    wrapper = [];
    if (process.platform === 'linux') {
      for (const candidate of ['/usr/bin/setpriv', '/bin/setpriv']) {
        if (fs.existsSync(candidate) && spawnSync(candidate, ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore' }).status === 0) {
          wrapper = [candidate, '--pdeathsig', 'KILL', '--'];
          break;
        }
      }
    }
  }
  return wrapper;
}

/** Observability (and tests): 'spawn' ({pid, binary, args}) and 'exit' ({pid, code, signal}). */
export const toolEvents = new EventEmitter();

/** Children of this process still running (tests check that none is left behind). */
export const runningTools = (): number[] => [...running].map((c) => c.pid!).filter(Boolean);

export class ToolError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
    /** The last lines ffmpeg wrote to stderr. */
    readonly stderr: string,
  ) {
    super(message);
  }

  /** Killed by a signal we did not send (out of memory…): worth another attempt. */
  get transient(): boolean {
    return this.signal !== null || /No space left on device|Cannot allocate memory|Resource temporarily unavailable/i.test(this.stderr);
  }
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Kill the child after this long. */
  timeoutMs?: number;
}

const STDERR_KEEP = 8192;

/** Runs a tool to completion; resolves with its stdout, rejects with ToolError (or the abort reason). */
export function runTool(binary: string, args: string[], options: RunOptions = {}): Promise<string> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<string>((resolve, reject) => {
    const [command, ...prefix] = [...deathSignalWrapper(), binary];
    const child = spawn(command, [...prefix, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    let failure: unknown = null;
    const kill = (reason: unknown) => {
      if (failure === null) failure = reason;
      child.kill('SIGKILL');
    };
    const onAbort = () => kill(signal!.reason ?? new Error('aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = options.timeoutMs ? setTimeout(() => kill(new ToolError(`${label(binary)} timed out`, null, null, stderr)), options.timeoutMs) : null;

    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEEP);
    });
    child.once('spawn', () => toolEvents.emit('spawn', { pid: child.pid, binary, args }));
    let closed = false;
    const close = (code: number | null, sig: NodeJS.Signals | null) => {
      if (closed) return;
      closed = true;
      running.delete(child);
      signal?.removeEventListener('abort', onAbort);
      if (timer) clearTimeout(timer);
      toolEvents.emit('exit', { pid: child.pid, code, signal: sig });
      if (failure !== null) return reject(failure instanceof Error ? failure : new Error('aborted', { cause: failure }));
      if (code === 0) return resolve(stdout);
      const lastLine = stderr.trim().split('\n').filter(Boolean).pop() ?? '';
      reject(new ToolError(`${label(binary)} failed (${sig ?? `exit ${code}`})${lastLine ? `: ${lastLine}` : ''}`, code, sig, stderr));
    };
    child.once('error', (err) => {
      if (failure === null) failure = err;
      // Could not be started at all (ENOENT, EACCES): no 'close' may follow.
      if (child.pid === undefined) close(null, null);
    });
    child.once('close', close);
  });
}

const label = (binary: string) => (/ffprobe[^/\\]*$/.test(binary) ? 'ffprobe' : 'ffmpeg');

/** Runs ffmpeg with the arguments that keep it quiet and non-interactive. */
export function ffmpeg(binary: string, args: string[], options: RunOptions = {}): Promise<string> {
  return runTool(binary, ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'error', '-y', ...args], options);
}

export interface ProbeResult {
  /** Seconds, > 0. */
  duration: number;
  /** Display dimensions (rotation applied). */
  width: number;
  height: number;
  hasAudio: boolean;
  formatName: string;
  videoCodec: string;
  /** Frames per second of the video stream (its average), when known. */
  frameRate: number | null;
}

export class NotAVideoError extends Error {}

interface RawStream {
  codec_type?: string;
  codec_name?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  width?: number;
  height?: number;
  duration?: string;
  tags?: Record<string, string>;
  side_data_list?: Array<{ rotation?: number }>;
  disposition?: { attached_pic?: number };
}

/** An ffprobe rate (`30000/1001`) as a number; null when unknown (`0/0`). */
function rate(text: string | undefined): number | null {
  const [num, den] = (text ?? '').split('/').map(Number);
  const value = den ? num / den : num;
  return Number.isFinite(value) && value > 0 && value < 1000 ? value : null;
}

/** Probes a file with ffprobe; NotAVideoError when it holds no playable video (image, audio, text…). */
export async function probe(ffprobePath: string, file: string, options: RunOptions = {}): Promise<ProbeResult> {
  let json: { streams?: RawStream[]; format?: { format_name?: string; duration?: string } };
  try {
    const out = await runTool(ffprobePath, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file], { timeoutMs: 60_000, ...options });
    json = JSON.parse(out);
  } catch (err) {
    if (options.signal?.aborted) throw err;
    if (err instanceof ToolError && err.transient) throw err;
    throw new NotAVideoError('The file is not a video that can be read');
  }
  const formatName = json.format?.format_name ?? '';
  const video = (json.streams ?? []).find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic && (s.width ?? 0) > 0 && (s.height ?? 0) > 0);
  if (!video) throw new NotAVideoError('The file has no video stream');
  if (
    /(^|,)(image2|[a-z0-9]+_pipe)(,|$)/.test(formatName) ||
    (['mjpeg', 'png', 'bmp', 'webp'].includes(video.codec_name ?? '') && !Number(json.format?.duration))
  ) {
    throw new NotAVideoError('The file is an image, not a video');
  }
  const duration = Number(json.format?.duration ?? video.duration ?? 0);
  if (!Number.isFinite(duration) || duration <= 0) throw new NotAVideoError('The file has no duration');
  const rotation = Number(video.tags?.rotate ?? video.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? 0);
  const quarter = Math.abs(Math.round(rotation / 90)) % 2 === 1;
  return {
    duration,
    width: quarter ? video.height! : video.width!,
    height: quarter ? video.width! : video.height!,
    hasAudio: (json.streams ?? []).some((s) => s.codec_type === 'audio'),
    formatName,
    videoCodec: video.codec_name ?? '',
    frameRate: rate(video.avg_frame_rate) ?? rate(video.r_frame_rate),
  };
}

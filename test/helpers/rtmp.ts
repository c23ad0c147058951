import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

/** What the live tests share: an RTMP publisher (a real ffmpeg), waiting for a condition, a free port. */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor<T>(what: string, check: () => Promise<T | null | undefined | false>, ms = 30_000, every = 200): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await sleep(every);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

export interface Publisher {
  proc: ChildProcess;
  exited: Promise<{ code: number | null; ms: number; stderr: string }>;
}

/** Publishers still running (killed by killPublishers at the end of a file). */
const running = new Set<ChildProcess>();

export function killPublishers(): void {
  for (const p of running) p.kill('SIGKILL');
}

/**
 * ffmpeg -re: testsrc 640x360 at 30 fps, H.264 (keyframe every second) + AAC sine. By default at a
 * constant 500 kb/s; `rate: { kbps, constant: false }` for an average rate instead (the live bench's).
 */
export function publish(
  ffmpegPath: string,
  url: string,
  seconds: number,
  rate: { kbps: number; constant: boolean } = { kbps: 500, constant: true },
): Publisher {
  const started = Date.now();
  const args = [
    '-hide_banner',
    '-loglevel',
    'error',
    '-nostdin',
    '-re',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=640x360:rate=30',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=44100',
    '-t',
    String(seconds),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-tune',
    'zerolatency',
    '-pix_fmt',
    'yuv420p',
    '-g',
    '30',
    '-keyint_min',
    '30',
    '-b:v',
    `${rate.kbps}k`,
    ...(rate.constant ? ['-minrate', `${rate.kbps}k`, '-maxrate', `${rate.kbps}k`, '-bufsize', `${rate.kbps}k`, '-x264-params', 'nal-hrd=cbr'] : []),
    '-c:a',
    'aac',
    '-b:a',
    '96k',
    '-f',
    'flv',
    url,
  ];
  const proc = spawn(ffmpegPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(proc);
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; ms: number; stderr: string }>((resolve) =>
    proc.on('exit', (code) => {
      running.delete(proc);
      resolve({ code, ms: Date.now() - started, stderr });
    }),
  );
  return { proc, exited };
}

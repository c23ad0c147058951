import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { contentTypeOf } from '../../src/media/content-types.ts';
import { deathSignalWrapper, ffmpeg, NotAVideoError, probe, runningTools, toolEvents } from '../../src/media/ffmpeg.ts';
import { isValidKey, LocalFileStore } from '../../src/media/file-store.ts';
import { renditionSize, thumbnailTimes } from '../../src/media/presets.ts';

const { ffmpegPath, ffprobePath } = loadConfig({});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Gone, or a zombie waiting to be reaped: either way no longer running. */
const dead = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
};
async function until(check: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await sleep(50);
  }
  return check();
}

let dir: string;
beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-media-unit-'));
});
afterAll(() => fsp.rm(dir, { recursive: true, force: true }));

describe('presets', () => {
  it('sizes renditions by their short side, even, never upscaled', () => {
    expect(renditionSize({ width: 1920, height: 1080 }, 720)).toEqual({ width: 1280, height: 720 });
    expect(renditionSize({ width: 1280, height: 720 }, 480)).toEqual({ width: 854, height: 480 });
    expect(renditionSize({ width: 1080, height: 1920 }, 720)).toEqual({ width: 720, height: 1280 }); // portrait
    expect(renditionSize({ width: 320, height: 240 }, 720)).toEqual({ width: 320, height: 240 });
    expect(renditionSize({ width: 641, height: 359 }, 480)).toEqual({ width: 642, height: 360 });
    expect(renditionSize({ width: 4096, height: 1716 }, 480)).toEqual({ width: 1146, height: 480 });
  });

  it('spaces thumbnails evenly inside the video', () => {
    expect(thumbnailTimes(2)).toEqual([0.25, 0.75, 1.25, 1.75]);
    expect(thumbnailTimes(0.1).every((t) => t >= 0 && t < 0.1)).toBe(true);
  });

  it('serves files with their media type', () => {
    expect(contentTypeOf('videos/a/r0-x/sd.mp4')).toBe('video/mp4');
    expect(contentTypeOf('videos/a/r0-x/thumbnail-0.jpg')).toBe('image/jpeg');
    expect(contentTypeOf('captions/1/en.vtt')).toBe('text/vtt; charset=utf-8');
    expect(contentTypeOf('x/unknown.bin')).toBe('application/octet-stream');
  });
});

describe('local file store', () => {
  it('accepts only safe relative keys', () => {
    for (const key of ['videos/abc/r0-1/sd.mp4', 'a', 'A_b-c.d/e']) expect(isValidKey(key), key).toBe(true);
    for (const key of ['', '/etc/passwd', '../x', 'a/../b', 'a//b', '.work/x', 'a/.hidden', 'a\\b', 'a/b c', 'a/%2e%2e', 'a/'.repeat(20) + 'b']) {
      expect(isValidKey(key), key).toBe(false);
    }
  });

  it('puts from a path or a stream, reads whole or a range, stats, and deletes a folder pruning empty parents', async () => {
    const store = new LocalFileStore(path.join(dir, 'store'));
    const source = path.join(dir, 'source.bin');
    await fsp.writeFile(source, '0123456789');
    expect((await store.put('videos/v1/r0-a/sd.mp4', source)).size).toBe(10);
    expect(fs.existsSync(source)).toBe(false); // taken over
    await store.put('videos/v1/r0-a/hd.mp4', Readable.from([Buffer.from('abc'), Buffer.from('def')]));
    await store.put('videos/v2/r0-b/sd.mp4', Readable.from([Buffer.from('x')]));
    expect(await store.stat('videos/v1/r0-a/hd.mp4')).toMatchObject({ size: 6 });
    expect(await store.stat('videos/v1/r0-a/missing.mp4')).toBeNull();
    expect(await store.stat('../escape')).toBeNull();
    expect(await text(await store.createReadStream('videos/v1/r0-a/sd.mp4'))).toBe('0123456789');
    expect(await text(await store.createReadStream('videos/v1/r0-a/sd.mp4', { start: 2, end: 4 }))).toBe('234');
    await expect(text(await store.createReadStream('videos/v1/none.mp4'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(store.put('../outside', source)).rejects.toThrow(/Invalid media key/);

    await store.delete('videos/v1/r0-a');
    expect(fs.existsSync(path.join(store.root, 'videos', 'v1'))).toBe(false); // pruned
    expect(await store.stat('videos/v2/r0-b/sd.mp4')).toMatchObject({ size: 1 });
    await store.delete('videos/v1'); // missing is fine
    await store.delete('videos/v2');
    expect(fs.readdirSync(store.root)).toEqual([]);
  });
});

describe('ffmpeg and ffprobe', () => {
  it('probes a video and refuses what is not one', async () => {
    const clip = path.join(dir, 'clip.mp4');
    await ffmpeg(ffmpegPath, [
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=10:duration=1',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      clip,
    ]);
    expect(await probe(ffprobePath, clip)).toMatchObject({ width: 160, height: 120, hasAudio: false, videoCodec: 'h264' });
    const image = path.join(dir, 'still.jpg');
    await ffmpeg(ffmpegPath, ['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=1', '-frames:v', '1', image]);
    const notes = path.join(dir, 'notes.txt');
    await fsp.writeFile(notes, 'plain text');
    const audio = path.join(dir, 'tone.m4a');
    await ffmpeg(ffmpegPath, ['-f', 'lavfi', '-i', 'sine=duration=1', '-c:a', 'aac', audio]);
    for (const file of [image, notes, audio, path.join(dir, 'missing.mp4')]) {
      await expect(probe(ffprobePath, file), file).rejects.toBeInstanceOf(NotAVideoError);
    }
  });

  it('kills ffmpeg with SIGKILL when the job is aborted', async () => {
    const controller = new AbortController();
    const spawned = new Promise<number>((resolve) => toolEvents.once('spawn', (e) => resolve(e.pid)));
    const exited = new Promise<{ signal: string | null }>((resolve) => toolEvents.once('exit', resolve));
    const run = ffmpeg(ffmpegPath, ['-re', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-t', '60', '-f', 'null', '-'], { signal: controller.signal });
    const pid = await spawned;
    controller.abort(new Error('job stopping'));
    await expect(run).rejects.toThrow('job stopping');
    expect((await exited).signal).toBe('SIGKILL');
    expect(dead(pid)).toBe(true);
    expect(runningTools()).toEqual([]);
  });

  // The child of a process that exits, or is killed outright, must not keep running.
  const holder = async (mode: 'exit' | 'kill') => {
    const script = path.join(dir, `hold-${mode}.ts`);
    const ffmpegModule = fileURLToPath(new URL('../../src/media/ffmpeg.ts', import.meta.url));
    await fsp.writeFile(
      script,
      `
      import { ffmpeg, toolEvents } from ${JSON.stringify(ffmpegModule)};
      toolEvents.on('spawn', (e) => {
        process.stdout.write(e.pid + '\\n');
        ${mode === 'exit' ? 'setTimeout(() => process.exit(0), 100);' : ''}
      });
      ffmpeg(${JSON.stringify(ffmpegPath)}, ['-re', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-t', '60', '-f', 'null', '-']).catch(() => {});
      setInterval(() => {}, 1000);
    `,
    );
    const node = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() });
    const pid = await new Promise<number>((resolve, reject) => {
      node.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
      node.once('exit', () => reject(new Error('holder exited early')));
    });
    expect(dead(pid)).toBe(false);
    if (mode === 'kill') node.kill('SIGKILL');
    expect(await until(() => dead(pid))).toBe(true);
  };

  it('kills ffmpeg when this process exits', () => holder('exit'), 20_000);

  it.skipIf(deathSignalWrapper().length === 0)('kills ffmpeg when this process is killed outright (SIGKILL)', () => holder('kill'), 20_000);
});

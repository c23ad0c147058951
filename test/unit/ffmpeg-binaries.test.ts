import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { chooseTool, describeTool, isCurrentVersion, parseToolVersion, type ToolVersion } from '../../src/lib/ffmpeg-binaries.ts';

const DEBIAN = 'ffmpeg version 5.1.9-0+deb12u1 Copyright (c) 2000-2026 the FFmpeg developers';
const NPM_FFMPEG = 'ffmpeg version N-47683-g0e8eb07980-static https://johnvansickle.com/ffmpeg/  Copyright (c) 2000-2018 the FFmpeg developers';
const NPM_FFPROBE = 'ffprobe version N-66595-gc2b38619c0-static https://johnvansickle.com/ffmpeg/  Copyright (c) 2007-2023 the FFmpeg developers';

const version = (line: string) => parseToolVersion(`${line}\nbuilt with gcc 12\n`);

describe('parseToolVersion', () => {
  it('reads releases, tagged builds and git builds', () => {
    expect(version(DEBIAN)).toEqual({ text: '5.1.9-0+deb12u1', major: 5, year: 2026 });
    expect(version('ffmpeg version n7.1 Copyright (c) 2000-2024 the FFmpeg developers')).toEqual({ text: 'n7.1', major: 7, year: 2024 });
    expect(version('ffmpeg version 4.4.2-0ubuntu0.22.04.1 Copyright (c) 2000-2021 the FFmpeg developers')).toMatchObject({ major: 4 });
    expect(version(NPM_FFMPEG)).toEqual({ text: 'N-47683-g0e8eb07980-static', major: null, year: 2018 });
    expect(version(NPM_FFPROBE)).toEqual({ text: 'N-66595-gc2b38619c0-static', major: null, year: 2023 });
    expect(parseToolVersion('bash: ffmpeg: command not found')).toBeNull();
    expect(parseToolVersion('')).toBeNull();
  });

  it('counts 5 and newer (or a git build of 2022 and later) as current', () => {
    expect(isCurrentVersion(version(DEBIAN))).toBe(true);
    expect(isCurrentVersion(version('ffmpeg version 4.4.2 Copyright (c) 2000-2021'))).toBe(false);
    expect(isCurrentVersion(version(NPM_FFMPEG))).toBe(false);
    expect(isCurrentVersion(version(NPM_FFPROBE))).toBe(true);
    expect(isCurrentVersion({ text: 'weird', major: null, year: null })).toBe(false);
    expect(isCurrentVersion(null)).toBe(false);
  });
});

describe('chooseTool', () => {
  const bundled = () => '/app/node_modules/@ffmpeg-installer/linux-x64/ffmpeg';
  const onPath = (v: ToolVersion | null) => ({ path: '/usr/bin/ffmpeg', version: v });

  it('takes the configured path first, without looking at the others', () => {
    const noBundle = () => {
      throw new Error('the npm package was looked up');
    };
    expect(chooseTool({ configured: '/opt/ffmpeg', onPath: onPath(version(DEBIAN)), bundled: noBundle })).toEqual({ path: '/opt/ffmpeg', source: 'env' });
  });

  it('prefers the one on PATH when it is 5 or newer, and then never loads the npm one', () => {
    const noBundle = () => {
      throw new Error('the npm package was looked up');
    };
    expect(chooseTool({ onPath: onPath(version(DEBIAN)), bundled: noBundle })).toEqual({ path: '/usr/bin/ffmpeg', source: 'path' });
    expect(chooseTool({ onPath: onPath({ text: 'N-118000-g1', major: null, year: 2025 }), bundled: noBundle }).source).toBe('path');
  });

  it('falls back to the npm build when PATH has none, an old one, or one that does not say its version', () => {
    for (const candidate of [null, onPath(version('ffmpeg version 4.4.2 Copyright (c) 2000-2021')), onPath(version(NPM_FFMPEG)), onPath(null)]) {
      expect(chooseTool({ onPath: candidate, bundled })).toEqual({ path: bundled(), source: 'npm' });
    }
  });
});

describe('loadConfig resolves ffmpeg and ffprobe', () => {
  const dirs: string[] = [];
  /** A folder holding fake ffmpeg/ffprobe that print the given first line for -version. */
  const fakeTools = (line: (name: string) => string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-fake-ffmpeg-'));
    dirs.push(dir);
    for (const name of ['ffmpeg', 'ffprobe']) {
      fs.writeFileSync(path.join(dir, name), `#!/bin/sh\necho '${line(name)}'\n`, { mode: 0o755 });
    }
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('uses a maintained ffmpeg on PATH before the npm build', () => {
    const dir = fakeTools((name) => `${name} version 6.1.1-3 Copyright (c) 2000-2023 the FFmpeg developers`);
    const config = loadConfig({ PATH: dir });
    expect(config.ffmpegPath).toBe(path.join(dir, 'ffmpeg'));
    expect(config.ffprobePath).toBe(path.join(dir, 'ffprobe'));
    expect(describeTool('ffmpeg', config.ffmpegPath)).toEqual({ line: `ffmpeg: ${dir}/ffmpeg (version 6.1.1-3, from PATH)`, warning: null });
  });

  it('keeps the npm build, with a warning at start, when the one on PATH is older than 5', () => {
    const dir = fakeTools((name) => `${name} version 4.3.6 Copyright (c) 2000-2023 the FFmpeg developers`);
    const config = loadConfig({ PATH: dir });
    expect(config.ffmpegPath).toMatch(/node_modules\/@ffmpeg-installer\/[^/]+\/ffmpeg$/);
    expect(config.ffprobePath).toMatch(/node_modules\/@ffprobe-installer\/[^/]+\/ffprobe$/);
    const { line, warning } = describeTool('ffmpeg', config.ffmpegPath);
    expect(line).toMatch(/^ffmpeg: .*\/ffmpeg \(version N-47683-g0e8eb07980-static, from npm package\)$/);
    expect(warning).toMatch(/^warning: ffmpeg is the static build of the npm package built in 2018, which receives no security fixes/);
  });

  it('takes FFMPEG_PATH and FFPROBE_PATH over everything', () => {
    const dir = fakeTools((name) => `${name} version 7.0 Copyright (c) 2000-2024 the FFmpeg developers`);
    const config = loadConfig({ PATH: dir, FFMPEG_PATH: '/opt/ff/ffmpeg', FFPROBE_PATH: '/opt/ff/ffprobe' });
    expect([config.ffmpegPath, config.ffprobePath]).toEqual(['/opt/ff/ffmpeg', '/opt/ff/ffprobe']);
  });
});

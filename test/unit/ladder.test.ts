/**
 * The adaptive ladder's rungs (src/media/presets.ts): the heights of 1080/720/480/360/240 that do not
 * exceed the source, measured on the short side so that a portrait video gets the same ladder as its
 * landscape twin; a source under 240 gets one rung of its own size; sd and hd come from the ladder.
 */
import { describe, expect, it } from 'vitest';
import { ladderFor, mp4Rungs } from '../../src/media/presets.ts';

const names = (w: number, h: number) => ladderFor({ width: w, height: h }).map((r) => r.name);

describe('the HLS ladder', () => {
  it('takes every rung up to the source: 1080p gets all five, 720p four, 500p three', () => {
    expect(names(1920, 1080)).toEqual(['1080p', '720p', '480p', '360p', '240p']);
    expect(names(1280, 720)).toEqual(['720p', '480p', '360p', '240p']);
    expect(names(888, 500)).toEqual(['480p', '360p', '240p']);
    // Above 1080p the top rung stays 1080p (never upscaled, never above it).
    expect(names(3840, 2160)).toEqual(['1080p', '720p', '480p', '360p', '240p']);
  });

  it('sizes each rung to the source aspect with even sides', () => {
    const sizes = ladderFor({ width: 1920, height: 1080 }).map((r) => [r.size.width, r.size.height]);
    expect(sizes).toEqual([
      [1920, 1080],
      [1280, 720],
      [854, 480],
      [640, 360],
      [426, 240],
    ]);
    for (const r of ladderFor({ width: 1000, height: 562 })) expect((r.size.width % 2) + (r.size.height % 2)).toBe(0);
  });

  it('measures a portrait source by its short side', () => {
    expect(names(1080, 1920)).toEqual(['1080p', '720p', '480p', '360p', '240p']);
    expect(ladderFor({ width: 1080, height: 1920 })[1].size).toEqual({ width: 720, height: 1280 });
  });

  it('gives a source under 240 one rung of its own size', () => {
    expect(ladderFor({ width: 320, height: 180 }).map((r) => [r.name, r.size.width, r.size.height])).toEqual([['180p', 320, 180]]);
  });

  it('packages sd from the largest rung at most 480p and hd from the largest at most 720p', () => {
    const pick = (w: number, h: number) => {
      const { sd, hd } = mp4Rungs(ladderFor({ width: w, height: h }));
      return [sd.name, hd.name];
    };
    expect(pick(1920, 1080)).toEqual(['480p', '720p']);
    expect(pick(640, 360)).toEqual(['360p', '360p']);
    expect(pick(320, 180)).toEqual(['180p', '180p']);
  });
});

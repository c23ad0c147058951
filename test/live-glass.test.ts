import { describe, expect, it } from 'vitest';
import { runGlassBench } from '../bench/live-glass.ts';

/**
 * The figure of issue 14 as a test: a real RTMP publish with the wall clock burned into its picture,
 * the watch page in headless Chromium, the clock read back from every presented frame
 * (bench/live-glass.ts). Runs once (it uses its own SQLite server: the database plays no part), and
 * alone, after the rest of the suite (vitest.config.ts): two browsers and the suite's encodes on two
 * cores starve the player, which a viewer's machine does not.
 */
describe('live glass-to-playback on the watch page', () => {
  it('plays a broadcast with 1 s segments within 3 s of the camera, without stalling', { timeout: 120_000 }, async () => {
    const result = await runGlassBench({ seconds: 10, warmup: 5, segment: 1 });
    const figures = JSON.stringify(result);
    expect(result.stalls, figures).toBe(0);
    expect(result.median_s, figures).toBeLessThanOrEqual(3);
    // And not impossibly low: the clock was read, not noise.
    expect(result.median_s).toBeGreaterThan(1);
  });
});

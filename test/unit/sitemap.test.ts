import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sitemapIndex, videoSitemap, xmlText, type VideoEntry } from '../../src/lib/sitemap.ts';

/** Well-formedness by libxml2 (Debian's libxml2-utils, which .ci/run installs): a real XML parser, not ours. */
function xmllint(xml: string): void {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-sitemap-')), 'sitemap.xml');
  fs.writeFileSync(file, xml);
  execFileSync('xmllint', ['--noout', file], { stdio: 'pipe' });
}

const entry = (i: number, overrides: Partial<VideoEntry> = {}): VideoEntry => ({
  loc: `https://videos.example.com/watch/${i}`,
  thumbnailLoc: `https://videos.example.com/posters/${i}`,
  title: `Video ${i}`,
  description: `About video ${i}`,
  playerLoc: `https://videos.example.com/embed/${i}`,
  duration: 61.4,
  publicationDate: 1_764_000_000,
  expirationDate: null,
  ...overrides,
});

describe('video sitemaps', () => {
  it('are well-formed, with the sitemap and video namespaces, and escape every text', () => {
    const xml = videoSitemap([entry(1), entry(2, { title: 'Q&A <live> "special" \u0001', description: '', expirationDate: 1_800_000_000, duration: null })]);
    xmllint(xml);
    expect(xml).toContain('xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"');
    expect(xml).toContain('xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"');
    expect(xml).toContain('<video:title>Q&amp;A &lt;live&gt; &quot;special&quot; </video:title>');
    expect(xml).toContain('<video:duration>61</video:duration>');
    expect(xml).toContain('<video:expiration_date>2027-01-15T08:00:00+00:00</video:expiration_date>');
    expect(xml.match(/<url>/g)).toHaveLength(2);
  });

  it('refuse more than 50,000 URLs in one file; an index names the files', () => {
    expect(() => videoSitemap(Array.from({ length: 50_001 }, (_, i) => entry(i)))).toThrow(RangeError);
    const index = sitemapIndex(['https://videos.example.com/hubs/a/sitemap-1.xml', 'https://videos.example.com/hubs/a/sitemap-2.xml?x=1&y=2']);
    xmllint(index);
    expect(index).toContain('?x=1&amp;y=2');
  });

  it('drop characters XML cannot hold', () => {
    expect(xmlText('a\u0000b\uFFFEc')).toBe('abc');
  });
});

/**
 * Sitemaps (sitemaps.org 0.9) with Google's video extension: one `<url>` per page that plays a video.
 * https://www.sitemaps.org/protocol.html, https://developers.google.com/search/docs/crawling-indexing/sitemaps/video-sitemaps
 */

/** At most this many URLs in one sitemap file (the protocol's limit); beyond it, a sitemap index. */
export const SITEMAP_MAX_URLS = 50_000;

export interface VideoEntry {
  /** The page the video plays on. */
  loc: string;
  thumbnailLoc: string;
  title: string;
  description: string;
  /** The embeddable player. */
  playerLoc: string;
  /** Seconds, when known. */
  duration: number | null;
  /** Unix seconds. */
  publicationDate: number;
  /** Unix seconds, when it stops being shown. */
  expirationDate: number | null;
}

const XML_CHARS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text for XML content and attributes: escaped, and without the characters XML 1.0 cannot hold. */
export function xmlText(value: string): string {
  return value.replace(XML_CHARS, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const w3c = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00');

/** A sitemap of video pages (at most SITEMAP_MAX_URLS entries: the caller splits beyond that). */
export function videoSitemap(entries: VideoEntry[]): string {
  if (entries.length > SITEMAP_MAX_URLS) throw new RangeError(`a sitemap holds at most ${SITEMAP_MAX_URLS} URLs`);
  const urls = entries.map((e) =>
    [
      '  <url>',
      `    <loc>${xmlText(e.loc)}</loc>`,
      '    <video:video>',
      `      <video:thumbnail_loc>${xmlText(e.thumbnailLoc)}</video:thumbnail_loc>`,
      // Google allows 100 characters of title and 2,048 of description.
      `      <video:title>${xmlText(e.title.slice(0, 100))}</video:title>`,
      `      <video:description>${xmlText((e.description || e.title).slice(0, 2048))}</video:description>`,
      `      <video:player_loc>${xmlText(e.playerLoc)}</video:player_loc>`,
      ...(e.duration !== null ? [`      <video:duration>${Math.max(1, Math.min(28_800, Math.round(e.duration)))}</video:duration>`] : []),
      ...(e.expirationDate !== null ? [`      <video:expiration_date>${w3c(e.expirationDate)}</video:expiration_date>`] : []),
      `      <video:publication_date>${w3c(e.publicationDate)}</video:publication_date>`,
      '    </video:video>',
      '  </url>',
    ].join('\n'),
  );
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">',
    ...urls,
    '</urlset>',
    '',
  ].join('\n');
}

/** A sitemap index naming sitemap files (for more than SITEMAP_MAX_URLS URLs). */
export function sitemapIndex(locs: string[]): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ...locs.map((loc) => `  <sitemap><loc>${xmlText(loc)}</loc></sitemap>`),
    '</sitemapindex>',
    '',
  ].join('\n');
}

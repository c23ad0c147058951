import { escapeHtml } from '../lib/html.ts';
import type { PageChapter, PageView, Refusal } from '../modules/watch/watch-view.ts';

/** JSON that can sit inside a <script> element: nothing in it can end the element or open a comment. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const COLOR = /^[0-9a-f]{3}([0-9a-f]{3})?$/i;
/** The accent of pages whose player sets none (and of refusals). */
const DEFAULT_ACCENT = '2d6cdf';
const colorOf = (value: string | null, fallback: string) => `#${value && COLOR.test(value) ? value : fallback}`;

/**
 * The colour of what must stand out on the dark picture (the played part of the seek bar, the
 * current chapter on the embed page's dark list): the accent, unless it is too dark to see there.
 */
function onDark(color: string): string {
  const hex = color.slice(1).length === 3 ? [...color.slice(1)].map((c) => c + c).join('') : color.slice(1);
  const [r, g, b] = [0, 2, 4].map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255);
  const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return luminance < 0.25 ? '#ffffff' : color;
}

/** Text on `onDark(color)`. */
function inkOn(color: string): string {
  const light = onDark(color) === '#ffffff' || ['#fff', '#ffffff'].includes(color.toLowerCase());
  if (light) return '#111318';
  const hex = color.slice(1).length === 3 ? [...color.slice(1)].map((c) => c + c).join('') : color.slice(1);
  const [r, g, b] = [0, 2, 4].map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 ? '#111318' : '#ffffff';
}

/** `indexed`: search engines may list the page (a share page; never an embed page or a refusal). */
function head(title: string, extra: string, color: string, indexed = false): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${indexed ? '' : '<meta name="robots" content="noindex">\n'}
<title>${escapeHtml(title)}</title>
${extra}<link rel="stylesheet" href="/web/player.css">
<style>:root{--rb-accent:${color};--rb-on-dark:${onDark(color)};--rb-on-dark-ink:${inkOn(color)}}</style>
</head>`;
}

/** A length in seconds as a viewer reads it: 0:42, 12:05, 1:02:03. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const pad = (n: number) => String(n).padStart(2, '0');
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

/** When an upcoming broadcast starts, for the page without script (the script shows the viewer's local time). */
function airDate(seconds: number | null): string {
  if (!seconds) return 'This live broadcast has not started yet.';
  return `This live broadcast starts at ${new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC.`;
}

function waitingText(first: PageChapter | undefined): string {
  if (!first) return 'This player has no videos yet.';
  if (first.state === 'processing') return 'This video is being processed. Try again in a moment.';
  if (first.state === 'unavailable') return 'This video is not available.';
  if (first.state === 'upcoming') return airDate(first.live?.air_date ?? null);
  if (first.gated) return 'Enter your email address to watch this video.';
  return '';
}

/** What a chapter's card shows over its thumbnail: its length, or that it is live or to come. */
function chapterBadge(chapter: PageChapter): string {
  if (chapter.state === 'live') return '<span class="rb-badge rb-badge-live" aria-hidden="true">Live</span>';
  if (chapter.state === 'upcoming') return '<span class="rb-badge" aria-hidden="true">Upcoming</span>';
  return chapter.duration !== null ? `<span class="rb-duration" aria-hidden="true">${clock(chapter.duration)}</span>` : '';
}

/** The same, read after the chapter's name (the badge is hidden from assistive technology). */
function chapterBadgeText(chapter: PageChapter): string {
  if (chapter.state === 'live') return ', live';
  if (chapter.state === 'upcoming') return ', upcoming';
  return chapter.duration !== null ? `, ${clock(chapter.duration)}` : '';
}

/**
 * The chapter list: a card per chapter with its thumbnail, number, name and length. Beside or under
 * the player, never over the picture; on an embed page it opens from the control bar unless
 * `playlist_always_open`.
 */
function chapterList(view: PageView): string {
  if (view.chapters.length < 2 && !view.settings.playlist_always_open) return '';
  const open = view.kind === 'watch' || view.settings.playlist_always_open;
  const items = view.chapters
    .map((c, i) => {
      const thumb = c.thumbnail ? `<img src="${escapeHtml(c.thumbnail)}" alt="" loading="lazy" decoding="async">` : '';
      return `<li><button type="button" data-chapter="${i}"${i === 0 ? ' aria-current="true"' : ''}><span class="rb-thumb">${thumb}${chapterBadge(c)}</span><span class="rb-chapter-text"><span class="rb-chapter-number">${i + 1}</span> <span class="rb-chapter-name">${escapeHtml(c.name)}</span><span class="rb-sr rb-badge-text">${chapterBadgeText(c)}</span></span></button></li>`;
    })
    .join('');
  return `<nav class="rb-chapters" aria-label="Chapters"${open ? '' : ' hidden'}><h2 class="rb-chapters-title">Chapters</h2><ol>${items}</ol></nav>`;
}

/** The control bar and menus of media-chrome (https://www.media-chrome.org), over the <video>. */
function controls(view: PageView): string {
  const chaptersButton =
    view.kind === 'embed' && (view.chapters.length > 1 || view.settings.playlist_always_open)
      ? `<button type="button" class="rb-chapters-button" aria-label="Chapters" aria-expanded="${view.settings.playlist_always_open}" keysused="Enter Space"><svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M4 6h2v2H4zm4 0h12v2H8zm-4 5h2v2H4zm4 0h12v2H8zm-4 5h2v2H4zm4 0h12v2H8z"/></svg></button>`
      : '';
  return `<media-settings-menu hidden anchor="auto">
<media-settings-menu-item class="rb-quality-item">Quality<media-rendition-menu slot="submenu" hidden><div slot="title">Quality</div></media-rendition-menu></media-settings-menu-item>
<media-settings-menu-item>Speed<media-playback-rate-menu slot="submenu" hidden rates="0.5 0.75 1 1.25 1.5 1.75 2"><div slot="title">Speed</div></media-playback-rate-menu></media-settings-menu-item>
</media-settings-menu>
<media-captions-menu hidden anchor="auto"></media-captions-menu>
<div class="rb-bottom">
<media-time-range class="rb-progress"></media-time-range>
<media-control-bar class="rb-bar">
<media-play-button></media-play-button>
<media-seek-backward-button seekoffset="10"></media-seek-backward-button>
<media-seek-forward-button seekoffset="10"></media-seek-forward-button>
<media-mute-button></media-mute-button>
<media-volume-range></media-volume-range>
<media-live-button class="rb-live-button"></media-live-button>
<media-time-display showduration notoggle></media-time-display>
<span class="rb-spacer"></span>
${chaptersButton}<media-captions-menu-button></media-captions-menu-button>
<media-settings-menu-button></media-settings-menu-button>
<media-pip-button></media-pip-button>
<media-fullscreen-button></media-fullscreen-button>
</media-control-bar>
</div>`;
}

/**
 * The player markup. The first chapter's sources and captions are in the HTML with the browser's
 * own controls, so it plays without script; the script replaces those controls with media-chrome's
 * and plays the adaptive stream.
 */
function playerMarkup(view: PageView): string {
  const first = view.chapters[0];
  const playable = first?.state === 'ready' && !first.gated;
  const sources = (playable ? first.sources : [])
    .map((s) => `<source src="${escapeHtml(s.src)}" type="${escapeHtml(s.type)}" data-quality="${escapeHtml(s.quality)}">`)
    .join('');
  const tracks = (playable ? first.captions : [])
    .map(
      (c) =>
        `<track kind="subtitles" src="${escapeHtml(c.src)}" srclang="${escapeHtml(c.srclang)}" label="${escapeHtml(c.label)}"${c.default ? ' default' : ''}>`,
    )
    .join('');
  const posterUrl = first?.thumbnail ?? view.poster;
  const poster = posterUrl ? ` poster="${escapeHtml(posterUrl)}"` : '';
  const waiting = waitingText(first);
  const bigPlay =
    view.settings.play_button && !view.settings.autoplay ? '<media-play-button slot="centered-chrome" class="rb-play"></media-play-button>\n' : '';
  return `<div class="rb-player" data-reelbase-player style="aspect-ratio:${view.width} / ${view.height}">
<media-controller class="rb-controller" defaultstreamtype="on-demand" breakpoints="xs:300 sm:420 md:600 lg:800">
<video slot="media" class="rb-video" controls playsinline preload="none"${poster}${view.settings.mute_onload ? ' muted' : ''}>${sources}${tracks}<p>Your browser cannot play this video.</p></video>
<media-loading-indicator slot="centered-chrome" noautohide></media-loading-indicator>
${bigPlay}<div slot="top-chrome" class="rb-top" noautohide><span class="rb-live-badge" hidden>Live</span></div>
<div slot="dialog" class="rb-layer" noautohide><div class="rb-overlays"></div><p class="rb-state" role="status"${waiting ? '' : ' hidden'}>${escapeHtml(waiting)}</p></div>
${controls(view)}
</media-controller>
</div>`;
}

/** The player and its chapter list, side by side or stacked (player.css). */
function stage(view: PageView): string {
  const list = chapterList(view);
  return `<div class="rb-stage${list ? ' rb-has-list' : ''}">
${playerMarkup(view)}
${list}
</div>`;
}

function configScript(view: PageView, nonce: string): string {
  const config = {
    kind: view.kind,
    uuid: view.uuid,
    nonce,
    poster: view.poster,
    emailGate: view.emailGate,
    settings: view.settings,
    chapters: view.chapters,
    controlsLater: view.settings.autoplay && view.chapters[0]?.state === 'ready' && !view.chapters[0].gated,
  };
  // From this origin, the pinned npm packages: hls.js (for the adaptive streams), the player, then
  // media-chrome, which upgrades its elements over a <video> the player has already given what
  // media-chrome reads of it (its renditions, its stream type). A page that plays by itself loads
  // media-chrome once its first frame shows (the player does, `controlsLater`): its ~0.4 s of the
  // main thread would otherwise come before that frame; the browser's own controls stand in.
  const streams = view.chapters.some((c) => c.state === 'ready' || c.state === 'live' || c.state === 'upcoming');
  const hlsJs = streams ? `<script src="/web/hls.js" nonce="${nonce}"></script>\n` : '';
  const mediaChrome = config.controlsLater ? '' : `\n<script src="/web/media-chrome.js" nonce="${nonce}"></script>`;
  return `<script type="application/json" id="reelbase-config">${jsonForScript(config)}</script>
${hlsJs}<script src="/web/player.js" nonce="${nonce}"></script>${mediaChrome}`;
}

/** schema.org VideoObject of a page, for search engines (https://schema.org/VideoObject). */
function videoObject(view: PageView): Record<string, unknown> {
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
  return {
    '@context': 'https://schema.org',
    '@type': 'VideoObject',
    name: view.name,
    description: view.description ?? view.name,
    url: view.watchUrl,
    embedUrl: view.embedUrl,
    uploadDate: iso(view.releasedAt),
    ...(view.expiresAt ? { expires: iso(view.expiresAt) } : {}),
    ...(view.sharePoster ? { thumbnailUrl: view.sharePoster } : {}),
    ...(view.duration !== null ? { duration: `PT${view.duration}S` } : {}),
    publisher: { '@type': 'Organization', name: view.organizationName },
  };
}

/** The share page (`/watch/:uuid`) or the iframe page (`/embed/:uuid`). */
export function renderPage(view: PageView, nonce: string, oembedUrl: string): string {
  const color = colorOf(view.settings.color, DEFAULT_ACCENT);
  const meta = [
    `<link rel="alternate" type="application/json+oembed" href="${escapeHtml(oembedUrl)}" title="${escapeHtml(view.name)}">`,
    `<link rel="canonical" href="${escapeHtml(view.watchUrl)}">`,
    `<meta property="og:type" content="video.other">`,
    `<meta property="og:title" content="${escapeHtml(view.name)}">`,
    `<meta property="og:url" content="${escapeHtml(view.watchUrl)}">`,
    ...(view.description ? [`<meta property="og:description" content="${escapeHtml(view.description)}">`] : []),
    ...(view.sharePoster ? [`<meta property="og:image" content="${escapeHtml(view.sharePoster)}">`] : []),
    // The player itself, for the previews that can play it in place.
    `<meta property="og:video" content="${escapeHtml(view.embedUrl)}">`,
    ...(view.embedUrl.startsWith('https:') ? [`<meta property="og:video:secure_url" content="${escapeHtml(view.embedUrl)}">`] : []),
    `<meta property="og:video:type" content="text/html">`,
    `<meta property="og:video:width" content="${view.width}">`,
    `<meta property="og:video:height" content="${view.height}">`,
    `<script type="application/ld+json">${jsonForScript(videoObject(view))}</script>`,
  ].join('\n');
  if (view.kind === 'embed') {
    return `${head(view.name, `${meta}\n`, color)}
<body class="rb-embed">
${stage(view)}
${configScript(view, nonce)}
</body>
</html>
`;
  }
  const sharing = view.sharingPage
    ? [
        view.description ? `<section class="rb-description"><p>${escapeHtml(view.description)}</p></section>` : '',
        view.shareLink
          ? `<section class="rb-share"><label>Share this video <input type="text" readonly value="${escapeHtml(view.shareLink)}"></label></section>`
          : '',
        view.embedCode
          ? `<details class="rb-embed-code"><summary>Embed</summary><textarea readonly rows="3">${escapeHtml(view.embedCode)}</textarea></details>`
          : '',
      ].join('\n')
    : '';
  return `${head(view.name, `${meta}\n`, color, true)}
<body class="rb-watch">
<header class="rb-header"><h1>${escapeHtml(view.name)}</h1><p class="rb-org">${escapeHtml(view.organizationName)}</p></header>
<main class="rb-main">
${view.approvalMessage ? `<p class="rb-approval">${escapeHtml(view.approvalMessage)}</p>\n` : ''}${stage(view)}
${sharing}
</main>
${configScript(view, nonce)}
</body>
</html>
`;
}

/** Why a page is not shown; with the access code form where a code opens it. */
export function renderRefusal(refusal: Refusal): string {
  const form = refusal.askCode
    ? `<form class="rb-code" method="post">
<label for="rb-access-code">Access code</label>
<input id="rb-access-code" name="access_code" type="password" autocomplete="off" required maxlength="255" autofocus>
<button type="submit">Watch</button>
</form>`
    : '';
  return `${head(refusal.title, '', `#${DEFAULT_ACCENT}`)}
<body class="rb-refusal">
<main class="rb-main">
<h1>${escapeHtml(refusal.title)}</h1>
<p>${escapeHtml(refusal.message)}</p>
${form}
</main>
</body>
</html>
`;
}

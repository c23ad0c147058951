import { escapeHtml } from '../lib/html.ts';
import type { PageView, Refusal } from '../modules/watch/watch-view.ts';

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
<style>:root{--rb-accent:${color}}</style>
</head>`;
}

/** The player markup: the first chapter's sources and captions are in the HTML, so it plays without script. */
function playerMarkup(view: PageView): string {
  const first = view.chapters[0];
  const sources = (first?.state === 'ready' ? first.sources : [])
    .map((s) => `<source src="${escapeHtml(s.src)}" type="${escapeHtml(s.type)}" data-quality="${escapeHtml(s.quality)}">`)
    .join('');
  const tracks = (first?.state === 'ready' ? first.captions : [])
    .map(
      (c) =>
        `<track kind="subtitles" src="${escapeHtml(c.src)}" srclang="${escapeHtml(c.srclang)}" label="${escapeHtml(c.label)}"${c.default ? ' default' : ''}>`,
    )
    .join('');
  const poster = view.poster ? ` poster="${escapeHtml(view.poster)}"` : '';
  const waiting = !first
    ? 'This player has no videos yet.'
    : first.state === 'processing'
      ? 'This video is being processed. Try again in a moment.'
      : first.state === 'unavailable'
        ? 'This video is not available.'
        : '';
  const chapters =
    view.chapters.length > 1 || view.settings.playlist_always_open
      ? `<ol class="rb-chapters"${view.settings.playlist_always_open || view.kind === 'watch' ? '' : ' hidden'}>${view.chapters
          .map((c, i) => `<li><button type="button" data-chapter="${i}"${i === 0 ? ' aria-current="true"' : ''}>${escapeHtml(c.name)}</button></li>`)
          .join('')}</ol>`
      : '';
  return `<div class="rb-player" data-reelbase-player style="aspect-ratio:${view.width} / ${view.height}">
<video class="rb-video" controls playsinline preload="metadata"${poster}${view.settings.mute_onload ? ' muted' : ''}>${sources}${tracks}<p>Your browser cannot play this video.</p></video>
<div class="rb-overlays"></div>
<p class="rb-state"${waiting ? '' : ' hidden'}>${escapeHtml(waiting)}</p>
</div>
${chapters}`;
}

function configScript(view: PageView, nonce: string): string {
  const config = { kind: view.kind, uuid: view.uuid, nonce, settings: view.settings, chapters: view.chapters };
  return `<script type="application/json" id="reelbase-config">${jsonForScript(config)}</script>
<script src="/web/player.js" nonce="${nonce}"></script>`;
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
${playerMarkup(view)}
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
${view.approvalMessage ? `<p class="rb-approval">${escapeHtml(view.approvalMessage)}</p>\n` : ''}${playerMarkup(view)}
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

import { escapeHtml } from '../lib/html.ts';
import type { HubCard, HubCategoryView, HubView } from '../modules/hubs/hub-view.ts';
import { jsonForScript } from './pages.ts';

const STYLE = `
body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f6f7f9}
header,main{max-width:1120px;margin:0 auto;padding:16px}
header h1{margin:8px 0 4px;font-size:1.6rem}
header p{margin:0;color:#57606a}
header a{color:#1f6feb}
nav{display:flex;flex-wrap:wrap;gap:8px;margin-top:12px}
nav a{padding:4px 12px;border-radius:999px;background:#e7ebf0;color:inherit;text-decoration:none}
nav a[aria-current]{background:#1f6feb;color:#fff}
section{margin:24px 0}
section h2{font-size:1.2rem;margin:0 0 12px}
section h2 a{color:inherit;text-decoration:none}
ul{list-style:none;margin:0;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:16px}
li a{display:block;color:inherit;text-decoration:none;background:#fff;border-radius:10px;overflow:hidden;box-shadow:0 1px 3px rgba(0,0,0,.12)}
li a:focus-visible,li a:hover{box-shadow:0 0 0 3px #1f6feb}
.poster{position:relative;aspect-ratio:16/9;background:#22272e}
.poster img{width:100%;height:100%;object-fit:cover;display:block}
.poster span{position:absolute;right:6px;bottom:6px;padding:1px 6px;border-radius:4px;background:rgba(0,0,0,.75);color:#fff;font-size:.8rem}
.title{display:block;padding:8px 10px 12px;font-weight:600}
.empty{color:#57606a}
`;

/** 75 → "1:15", 3725 → "1:02:05". */
export function clock(seconds: number): string {
  const s = Math.round(seconds);
  const [h, m, x] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(x)}` : `${m}:${pad(x)}`;
}

function card(c: HubCard): string {
  const poster = c.poster ? `<img src="${escapeHtml(c.poster)}" alt="" loading="lazy" width="320" height="180">` : '';
  const duration = c.duration !== null ? `<span>${clock(c.duration)}</span>` : '';
  return `<li><a href="${escapeHtml(c.watchUrl)}" data-player="${escapeHtml(c.uuid)}"><div class="poster">${poster}${duration}</div><span class="title">${escapeHtml(c.title)}</span></a></li>`;
}

function section(category: HubCategoryView, linkTitle: boolean): string {
  const title = linkTitle ? `<a href="${escapeHtml(category.url)}">${escapeHtml(category.name)}</a>` : escapeHtml(category.name);
  const cards = category.cards.length > 0 ? `<ul>${category.cards.map(card).join('')}</ul>` : '<p class="empty">No videos here yet.</p>';
  return `<section id="${escapeHtml(category.slug)}"><h2>${title}</h2>${cards}</section>`;
}

/** schema.org: the page's videos as VideoObjects (an ItemList), for search engines. */
function structuredData(view: HubView, categories: HubCategoryView[]): string {
  const seen = new Set<string>();
  const videos = categories
    .flatMap((c) => c.cards)
    .filter((c) => !seen.has(c.uuid) && seen.add(c.uuid))
    .map((c, i) => ({
      '@type': 'ListItem',
      position: i + 1,
      item: {
        '@type': 'VideoObject',
        name: c.title,
        description: c.description ?? c.title,
        url: c.watchUrl,
        embedUrl: c.embedUrl,
        uploadDate: new Date(c.releasedAt * 1000).toISOString(),
        ...(c.poster ? { thumbnailUrl: c.poster } : {}),
        ...(c.duration !== null ? { duration: `PT${Math.round(c.duration)}S` } : {}),
      },
    }));
  return jsonForScript({ '@context': 'https://schema.org', '@type': 'ItemList', name: view.name, url: view.url, itemListElement: videos });
}

/** The hub page, or one category's page when `view.category` is set. Server-rendered, no script. */
export function renderHub(view: HubView): string {
  const shown = view.category ? [view.category] : view.categories;
  const title = view.category ? `${view.category.name} · ${view.name}` : view.name;
  const url = view.category ? view.category.url : view.url;
  const image = shown.flatMap((c) => c.cards).find((c) => c.poster)?.poster;
  const nav = view.categories
    .map((c) => `<a href="${escapeHtml(c.url)}"${view.category?.slug === c.slug ? ' aria-current="page"' : ''}>${escapeHtml(c.name)}</a>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="canonical" href="${escapeHtml(url)}">
<link rel="icon" href="/favicon.ico">
<meta property="og:type" content="website">
<meta property="og:title" content="${escapeHtml(title)}">
<meta property="og:url" content="${escapeHtml(url)}">
${view.description ? `<meta property="og:description" content="${escapeHtml(view.description)}">\n<meta name="description" content="${escapeHtml(view.description)}">\n` : ''}${image ? `<meta property="og:image" content="${escapeHtml(image)}">\n` : ''}<script type="application/ld+json">${structuredData(view, shown)}</script>
<style>${STYLE}</style>
</head>
<body>
<header>
${view.category ? `<p><a href="${escapeHtml(view.url)}">${escapeHtml(view.name)}</a></p>` : ''}
<h1>${escapeHtml(view.category ? view.category.name : view.name)}</h1>
${view.description && !view.category ? `<p>${escapeHtml(view.description)}</p>` : ''}
${nav ? `<nav aria-label="Categories">${nav}</nav>` : ''}
</header>
<main>
${shown.map((c) => section(c, !view.category)).join('\n')}
</main>
</body>
</html>
`;
}

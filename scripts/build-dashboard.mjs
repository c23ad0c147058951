// The web dashboard (dashboard/, docs/dashboard.md): Preact bundled by esbuild into
// dist/dashboard/assets/<name>-<hash>.{js,css}, and the page that loads them, dist/dashboard/index.html.
// Run by `npm run build` and `npm ci` (through scripts/build.mjs), and by the test setup.
// The assets' names change with their content, so Reelbase serves them with a cache lifetime of a year.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** Builds the dashboard; answers the files written and the initial JavaScript's size. */
export async function buildDashboard({ outDir = path.join(root, 'dist', 'dashboard'), minify = true } = {}) {
  const started = performance.now();
  const assets = path.join(outDir, 'assets');
  const result = await build({
    entryPoints: { app: path.join(root, 'dashboard', 'src', 'main.tsx') },
    outdir: assets,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    target: ['chrome111', 'firefox114', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify,
    sourcemap: 'linked',
    metafile: true,
    write: false,
    legalComments: 'linked',
    logLevel: 'warning',
  });
  const entry = Object.entries(result.metafile.outputs).find(([, o]) => o.entryPoint);
  if (!entry) throw new Error('dashboard: no entry point was built');
  const script = path.basename(entry[0]);
  const style = entry[1].cssBundle ? path.basename(entry[1].cssBundle) : null;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Reelbase</title>
<link rel="icon" href="/web/favicon.svg" type="image/svg+xml">
${style ? `<link rel="stylesheet" href="/app/assets/${style}">\n` : ''}<script type="module" src="/app/assets/${script}"></script>
</head>
<body>
<div id="app"><noscript>The Reelbase dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;
  // A new folder beside the old, then swapped: a server serving meanwhile reads whole files of one or the other.
  const next = `${outDir}.${process.pid}.tmp`;
  fs.rmSync(next, { recursive: true, force: true });
  fs.mkdirSync(path.join(next, 'assets'), { recursive: true });
  for (const output of result.outputFiles) fs.writeFileSync(path.join(next, 'assets', path.basename(output.path)), output.contents);
  fs.writeFileSync(path.join(next, 'index.html'), html);
  const old = `${outDir}.${process.pid}.old`;
  if (fs.existsSync(outDir)) fs.renameSync(outDir, old);
  fs.renameSync(next, outDir);
  fs.rmSync(old, { recursive: true, force: true });
  const scriptBytes = result.outputFiles.filter((o) => o.path.endsWith('.js')).reduce((sum, o) => sum + o.contents.length, 0);
  return { script, style, scriptBytes, ms: performance.now() - started };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const built = await buildDashboard();
  process.stderr.write(`reelbase: built dist/dashboard in ${(built.ms / 1000).toFixed(1)} s (${Math.round(built.scriptBytes / 1024)} KB of JavaScript)\n`);
}

// `npm run build` (and `npm ci` / `npm install`, through `prepare`): the server and the admin CLI
// each bundled into one CommonJS file, dist/server.cjs and dist/cli.cjs, which `npm start`
// (scripts/start.mjs) and `npm run reelbase` (scripts/cli.mjs) run with V8's code cache.
// Loading ~1,700 ES modules (typebox, kysely, fastify, …) file by file, and compiling them, took
// most of a second on a small machine (docs/performance.md, "Cold start").
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { asciiComments } from './ascii-comments.mjs';
import { buildDashboard } from './build-dashboard.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dist = path.join(root, 'dist');

/**
 * No `import()` of a package left out may remain in the bundle: V8 drops the dynamic import
 * callback of a script compiled from its code cache. A package imported lazily inside the bundle is
 * fine (esbuild makes it a lazily run part of the bundle).
 *
 * Left out of the bundle, loaded from node_modules when used: native addons, packages loaded only
 * when a feature is first used (src/lib/when-used.ts), and packages that read files of their own
 * folder at run time (the docs UI's static files, the player's browser libraries, the ffmpeg builds).
 */
const EXTERNAL = [
  'better-sqlite3',
  'pg',
  'pg-native',
  '@aws-sdk/*',
  '@smithy/*',
  '@tus/s3-store',
  'exceljs',
  'nodemailer',
  'ioredis',
  '@fastify/swagger-ui',
  '@ffmpeg-installer/*',
  '@ffprobe-installer/*',
  'media-chrome',
  'hls.js',
];

const started = performance.now();
const result = await build({
  write: false,
  metafile: true,
  entryPoints: {
    server: path.join(root, 'src', 'server.ts'),
    cli: path.join(root, 'src', 'cli.ts'),
    // The analytics rollups' thread (src/modules/analytics/rollup-thread.ts), loaded beside the bundle.
    'rollup-thread': path.join(root, 'src', 'modules', 'analytics', 'rollup.thread.ts'),
  },
  outdir: dist,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  target: 'node20',
  // CommonJS, not an ES module: only a script can be compiled from V8's code cache (vm.Script).
  format: 'cjs',
  define: { 'import.meta.url': '__reelbaseModuleUrl' },
  // For `node --enable-source-maps dist/server.mjs`: stack traces that name src/ files and lines.
  sourcemap: true,
  external: EXTERNAL,
  // The modules' own address (createRequire, the package root) is the bundle's.
  banner: { js: "const __reelbaseModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});
const lazyExternal = Object.values(result.metafile.outputs).flatMap((o) =>
  o.imports.filter((i) => i.kind === 'dynamic-import' && i.external).map((i) => i.path),
);
if (lazyExternal.length > 0) throw new Error(`import() of packages left out of the bundle (see EXTERNAL): ${lazyExternal.join(', ')}`);
// Each file replaced whole (a server starting meanwhile reads the old bundle or the new one), the
// code caches of the old one removed, and the stamp last: it says the bundle is complete.
fs.mkdirSync(dist, { recursive: true });
for (const file of fs.readdirSync(dist)) if (file.endsWith('.cache')) fs.rmSync(path.join(dist, file), { force: true });
for (const output of result.outputFiles) {
  const temporary = `${output.path}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, output.path.endsWith('.cjs') ? asciiComments(output.text) : output.contents);
  fs.renameSync(temporary, output.path);
}
fs.writeFileSync(path.join(dist, '.built'), `${new Date().toISOString()}\n`);
process.stderr.write(`reelbase: built dist/server.cjs, dist/cli.cjs and dist/rollup-thread.cjs in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
const dashboard = await buildDashboard();
process.stderr.write(`reelbase: built dist/dashboard in ${(dashboard.ms / 1000).toFixed(1)} s\n`);

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of Reelbase's package.json, found upwards from this module: the same from the
 * TypeScript under src/ and from the bundle `npm start` runs (dist/server.mjs), so that files kept
 * beside the code (the player's browser assets) are found from either.
 */
function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'src', 'web', 'assets'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error('Reelbase: its package folder (with src/web/assets) was not found above its code');
    dir = up;
  }
}

export const packageRoot = findRoot();

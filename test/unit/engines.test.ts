import fs from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * `engines` says Node.js >= 20, and CI runs on 20 and 24: every package the lockfile installs must
 * say it runs on both. A dependency's minor release can raise its floor (cookie 2 asks for 22, and
 * light-my-request 6.8 pulled it in): this fails then, rather than npm's warning scrolling by.
 */
describe('installed packages', () => {
  it('all declare support for the Node.js versions Reelbase supports (20 and 24)', () => {
    const lock = JSON.parse(fs.readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
      packages: Record<string, { version?: string; engines?: { node?: string } | string[]; dev?: boolean }>;
    };
    const refused: string[] = [];
    for (const [where, pkg] of Object.entries(lock.packages)) {
      const range = pkg.engines && !Array.isArray(pkg.engines) ? pkg.engines.node : undefined;
      if (!range || !where) continue;
      for (const node of ['20.19.0', '24.0.0']) {
        if (!semver.satisfies(node, range, { includePrerelease: true })) refused.push(`${where}@${pkg.version} wants node ${range} (not ${node})`);
      }
    }
    expect(refused).toEqual([]);
  });
});

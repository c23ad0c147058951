import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { BROWSER_UA } from './factories.ts';

/** Debian's chromium, which .ci/run installs. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Headless Chromium as a viewer's browser: autoplay allowed, and the user agent of a desktop Chrome
 * (headless Chromium names itself HeadlessChrome, whose reports analytics leaves out as a bot's).
 */
export async function launchViewerBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--autoplay-policy=no-user-gesture-required',
      `--user-agent=${BROWSER_UA}`,
    ],
  });
}

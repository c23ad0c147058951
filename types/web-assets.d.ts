/**
 * Globals of the browser scripts in src/web/assets, for their type-check (tsconfig.assets.json).
 * Kept outside src on purpose: tsconfig.json (the Node code) includes all of src, and these are
 * browser globals it must not see.
 */

interface Window {
  /**
   * hls.js, once /web/hls.js has loaded: the UMD build (dist/hls.min.js) of the pinned hls.js
   * dependency sets it. The page loads it before player.js when a chapter has a stream to play;
   * player.js loads it again if that failed.
   */
  Hls?: typeof import('hls.js').default;
}

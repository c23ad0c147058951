/**
 * Globals of the browser scripts in src/web/assets, for their type-check (tsconfig.assets.json).
 * Kept outside src on purpose: tsconfig.json (the Node code) includes all of src, and these are
 * browser globals it must not see.
 */

interface Window {
  /**
   * hls.js, once /web/hls.js has loaded: the UMD build (dist/hls.light.min.js) of the pinned hls.js
   * dependency sets it. player.js loads it only for live broadcasts in browsers without HLS.
   */
  Hls?: typeof import('hls.js').default;
}

import { escapeHtml } from '../../lib/html.ts';

/** The addresses of a player's pages and the HTML that embeds it. */
export class EmbedCode {
  constructor(private readonly publicUrl: string) {}

  watchUrl(uuid: string): string {
    return `${this.publicUrl}/watch/${uuid}`;
  }

  embedUrl(uuid: string): string {
    return `${this.publicUrl}/embed/${uuid}`;
  }

  /** The poster at its stable address, which checks the rules at every fetch (PlaybackService.poster). */
  posterUrl(uuid: string): string {
    return `${this.publicUrl}/posters/${uuid}`;
  }

  /** Fixed-size embed code (the v1 oEmbed and the share page's embed button). */
  iframe(uuid: string, title: string, width: number, height: number): string {
    return `<iframe src="${escapeHtml(this.embedUrl(uuid))}" width="${width}" height="${height}" title="${escapeHtml(title)}" frameborder="0" allow="autoplay; fullscreen; picture-in-picture" allowfullscreen></iframe>`;
  }

  /** Responsive embed code (v1.1): the frame fills its container's width at the player's aspect ratio. */
  responsiveIframe(uuid: string, title: string, width: number, height: number): string {
    const ratio = ((height / width) * 100).toFixed(4).replace(/\.?0+$/, '');
    return `<div style="position:relative;width:100%;max-width:${width}px;"><div style="position:relative;padding-top:${ratio}%;"><iframe src="${escapeHtml(this.embedUrl(uuid))}" title="${escapeHtml(title)}" style="position:absolute;top:0;left:0;width:100%;height:100%;border:0;" allow="autoplay; fullscreen; picture-in-picture" allowfullscreen></iframe></div></div>`;
  }
}

/** Image formats a custom thumbnail may have, recognised by their first bytes (not by what a server claims). */
export interface ImageKind {
  ext: 'jpg' | 'png' | 'gif' | 'webp';
  width: number | null;
  height: number | null;
}

const startsWith = (b: Uint8Array, bytes: number[], at = 0) => bytes.every((v, i) => b[at + i] === v);
const ascii = (b: Uint8Array, text: string, at = 0) =>
  startsWith(
    b,
    [...text].map((c) => c.charCodeAt(0)),
    at,
  );

/** The format (and size when the header gives it) of an image from its first bytes; null when it is none of them. */
export function sniffImage(head: Uint8Array): ImageKind | null {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) {
    const sized = head.length >= 24 && ascii(head, 'IHDR', 12);
    return { ext: 'png', width: sized ? view.getUint32(16) : null, height: sized ? view.getUint32(20) : null };
  }
  if (startsWith(head, [0xff, 0xd8, 0xff])) return { ext: 'jpg', width: null, height: null };
  if (ascii(head, 'GIF87a') || ascii(head, 'GIF89a')) {
    const sized = head.length >= 10;
    return { ext: 'gif', width: sized ? view.getUint16(6, true) : null, height: sized ? view.getUint16(8, true) : null };
  }
  if (head.length >= 12 && ascii(head, 'RIFF') && ascii(head, 'WEBP', 8)) return { ext: 'webp', width: null, height: null };
  return null;
}

import { createHmac, randomBytes } from 'node:crypto';

/**
 * The RTMP handshake, server side. Clients that send a zero version in C1 get the plain handshake
 * (S1 random, S2 = echo of C1); clients that sign C1 (Flash-style encoders, ffmpeg, OBS/librtmp)
 * get S1 and S2 signed the way they may verify.
 */

export const HANDSHAKE_SIZE = 1536;

const FMS_KEY_TEXT = Buffer.from('Genuine Adobe Flash Media Server 001', 'latin1');
const FMS_KEY = Buffer.concat([
  FMS_KEY_TEXT,
  Buffer.from([
    0xf0, 0xee, 0xc2, 0x4a, 0x80, 0x68, 0xbe, 0xe8, 0x2e, 0x00, 0xd0, 0xd1, 0x02, 0x9e, 0x7e, 0x57, 0x6e, 0xec, 0x5d, 0x2d, 0x29, 0x80, 0x6f, 0xab, 0x93, 0xb8,
    0xe6, 0x36, 0xcf, 0xeb, 0x31, 0xae,
  ]),
]);
const FP_KEY_TEXT = Buffer.from('Genuine Adobe Flash Player 001', 'latin1');
const DIGEST_LENGTH = 32;

const hmac = (key: Buffer, data: Buffer) => createHmac('sha256', key).update(data).digest();

/** Where the digest sits in a 1536-byte C1/S1 for scheme 0 (base 8) or scheme 1 (base 772). */
function digestOffset(buf: Buffer, base: number): number {
  return ((buf[base] + buf[base + 1] + buf[base + 2] + buf[base + 3]) % 728) + base + 4;
}

function digestOver(buf: Buffer, offset: number, key: Buffer): Buffer {
  const message = Buffer.concat([buf.subarray(0, offset), buf.subarray(offset + DIGEST_LENGTH)]);
  return hmac(key, message);
}

/** The client's digest when C1 is signed (scheme 0 or 1), else null. */
function clientDigest(c1: Buffer): { digest: Buffer; base: number } | null {
  for (const base of [772, 8]) {
    const offset = digestOffset(c1, base);
    const expected = digestOver(c1, offset, FP_KEY_TEXT);
    if (expected.equals(c1.subarray(offset, offset + DIGEST_LENGTH))) return { digest: c1.subarray(offset, offset + DIGEST_LENGTH), base };
  }
  return null;
}

/** S0 + S1 + S2 in answer to C1. */
export function handshakeResponse(c1: Buffer): Buffer {
  const s0 = Buffer.from([3]);
  const signed = c1.readUInt32BE(4) !== 0 ? clientDigest(c1) : null;
  if (!signed) {
    const s1 = randomBytes(HANDSHAKE_SIZE);
    s1.writeUInt32BE(0, 0);
    s1.writeUInt32BE(0, 4);
    return Buffer.concat([s0, s1, c1]);
  }
  const s1 = randomBytes(HANDSHAKE_SIZE);
  s1.writeUInt32BE(Math.floor(Date.now() / 1000) >>> 0, 0);
  s1.set([0x04, 0x05, 0x00, 0x01], 4);
  const offset = digestOffset(s1, signed.base);
  digestOver(s1, offset, FMS_KEY_TEXT).copy(s1, offset);

  const s2 = randomBytes(HANDSHAKE_SIZE);
  const key = hmac(FMS_KEY, signed.digest);
  hmac(key, s2.subarray(0, HANDSHAKE_SIZE - DIGEST_LENGTH)).copy(s2, HANDSHAKE_SIZE - DIGEST_LENGTH);
  return Buffer.concat([s0, s1, s2]);
}

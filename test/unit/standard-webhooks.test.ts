import { describe, expect, it } from 'vitest';
import { newSecret, sign, signatureHeaders, signingKey } from '../../src/lib/standard-webhooks.ts';

describe('Standard Webhooks signing', () => {
  it("matches the standard's published example", () => {
    // From the Standard Webhooks specification and its reference libraries.
    expect(sign('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('uses a secret without the whsec_ prefix as its UTF-8 bytes', () => {
    expect(signingKey('plain-secret')).toEqual(Buffer.from('plain-secret'));
    expect(signingKey('whsec_')).toEqual(Buffer.from('whsec_'));
    expect(sign('plain-secret', 'msg_1', 1, '{}')).not.toBe(sign('plain-secres', 'msg_1', 1, '{}'));
  });

  it('signs id, timestamp and body together, and makes secrets in the standard form', () => {
    const headers = signatureHeaders('whsec_c2VjcmV0', 'msg_2', 1700000000, '{"a":1}');
    expect(headers).toEqual({
      'webhook-id': 'msg_2',
      'webhook-timestamp': '1700000000',
      'webhook-signature': sign('whsec_c2VjcmV0', 'msg_2', 1700000000, '{"a":1}'),
    });
    expect(sign('whsec_c2VjcmV0', 'msg_2', 1700000001, '{"a":1}')).not.toBe(headers['webhook-signature']);
    expect(sign('whsec_c2VjcmV0', 'msg_3', 1700000000, '{"a":1}')).not.toBe(headers['webhook-signature']);
    expect(newSecret()).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(signingKey(newSecret())).toHaveLength(24);
  });
});

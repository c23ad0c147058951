import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/http/logging.ts';

describe('redactUrl', () => {
  it('masks auth_token and token values, keeping the rest of the URL', () => {
    expect(redactUrl('/dashboard/v1/players?auth_token=rb_secret&per_page=2')).toBe('/dashboard/v1/players?auth_token=[REDACTED]&per_page=2');
    expect(redactUrl('/a?per_page=2&token=s3cret')).toBe('/a?per_page=2&token=[REDACTED]');
    expect(redactUrl('/a?AUTH_TOKEN=s3cret')).toBe('/a?AUTH_TOKEN=[REDACTED]');
  });

  it('masks the key in every spelling the query parser reads as auth_token', () => {
    expect(redactUrl('/a?auth%5Ftoken=s3cret')).toBe('/a?auth%5Ftoken=[REDACTED]');
    expect(redactUrl('/a?auth_token[]=s3cret')).toBe('/a?auth_token[]=[REDACTED]');
    expect(redactUrl('/a?auth_token%5B%5D=s3cret&x=1')).toBe('/a?auth_token%5B%5D=[REDACTED]&x=1');
    expect(redactUrl('/a?auth_token=one&auth_token=two')).toBe('/a?auth_token=[REDACTED]&auth_token=[REDACTED]');
  });

  it('leaves URLs without a token untouched, malformed escapes included', () => {
    for (const url of ['/a', '/a?', '/a?x=1&tokens=2', '/a?%zz=1', '/a?my_auth_token=1', '/a?auth_token']) {
      expect(redactUrl(url)).toBe(url);
    }
    expect(redactUrl('/a?%zz=1&auth_token=q')).toBe('/a?%zz=1&auth_token=[REDACTED]');
  });
});

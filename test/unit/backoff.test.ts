import { describe, expect, it } from 'vitest';
import { backoffMs } from '../../src/jobs/backoff.ts';

describe('backoffMs', () => {
  it('doubles per attempt between half and the full step, capped', () => {
    expect(backoffMs(1, 1000, 3_600_000, () => 0)).toBe(500);
    expect(backoffMs(1, 1000, 3_600_000, () => 1)).toBe(1000);
    expect(backoffMs(4, 1000, 3_600_000, () => 1)).toBe(8000);
    expect(backoffMs(40, 1000, 3_600_000, () => 1)).toBe(3_600_000);
  });
});

import { describe, expect, it } from 'vitest';
import { zonedIso } from '../../../renderer/src/lib/zone-time.js';

describe('zonedIso', () => {
  it('writes an instant in a zone with its offset there, whatever the computer is set to', () => {
    const at = Date.parse('2026-11-22T07:49:19.500Z');
    expect(zonedIso('UTC', at)).toBe('2026-11-22T07:49:19+00:00');
    expect(zonedIso('Asia/Karachi', at)).toBe('2026-11-22T12:49:19+05:00');
    expect(zonedIso('Asia/Kathmandu', at)).toBe('2026-11-22T13:34:19+05:45');
    // Midnight is 00, not 24.
    expect(zonedIso('Asia/Karachi', Date.parse('2026-11-21T19:00:00Z'))).toBe('2026-11-22T00:00:00+05:00');
  });

  it('tells the repeated hour of a fall-back apart by its offset', () => {
    expect(zonedIso('America/New_York', Date.parse('2026-11-01T05:30:00Z'))).toBe('2026-11-01T01:30:00-04:00');
    expect(zonedIso('America/New_York', Date.parse('2026-11-01T06:30:00Z'))).toBe('2026-11-01T01:30:00-05:00');
  });

  it('gives null for a time or zone that does not read', () => {
    expect(zonedIso('UTC', Number.NaN)).toBeNull();
    expect(zonedIso('Mars/Olympus', 0)).toBeNull();
  });
});

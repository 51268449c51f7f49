import { describe, expect, it } from 'vitest';
import { allowedHostNames, checkHost, checkWriteOrigin } from '../../../src/calibration/label/request-origin.ts';

describe('which names and origins the label server answers to', () => {
  it('allows the listen address, the loopback names on loopback, and configured names only', () => {
    expect(allowedHostNames('127.0.0.1')).toEqual(['127.0.0.1', '::1', 'localhost']);
    expect(allowedHostNames('::1', ['Labels.Internal'])).toEqual(['127.0.0.1', '::1', 'labels.internal', 'localhost']);
    expect(allowedHostNames('10.0.0.5')).toEqual(['10.0.0.5']);
    expect(allowedHostNames('0.0.0.0')).toEqual([]);
  });

  it('reads Host as name[:port] or [v6][:port], case-insensitively; anything else is refused', () => {
    const allowed = allowedHostNames('127.0.0.1');
    for (const h of ['127.0.0.1:4320', 'LOCALHOST:4320', 'localhost', '[::1]:4320', '[::1]']) expect(checkHost(h, allowed), h).toBeNull();
    for (const h of [undefined, '', 'evil.example:4320', 'localhost.evil.example', 'evil@127.0.0.1', '127.0.0.1/x', '::1', '127.0.0.1:4320:1']) {
      expect(checkHost(h, allowed)?.error, String(h)).toBe('host-not-allowed');
    }
  });

  it('takes a write only with an Origin of the host it was sent to', () => {
    expect(checkWriteOrigin('http://127.0.0.1:4320', '127.0.0.1:4320')).toBeNull();
    expect(checkWriteOrigin('https://labels.internal', 'labels.internal')).toBeNull(); // behind a TLS proxy
    expect(checkWriteOrigin(undefined, '127.0.0.1:4320')?.error).toBe('origin-required');
    for (const o of [
      'null',
      'http://127.0.0.1:4321',
      'http://evil.example:4320',
      'ftp://127.0.0.1:4320',
      'http://127.0.0.1:4320/',
      'http://user@127.0.0.1:4320',
    ]) {
      expect(checkWriteOrigin(o, '127.0.0.1:4320')?.error, o).toBe('origin-not-allowed');
    }
  });
});

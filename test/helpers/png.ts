import { inflateSync } from 'node:zlib';

// A minimal PNG reader for screenshots the tests check (8-bit RGB or RGBA, not interlaced: what
// Chromium writes). No dependency: the five row filters of the PNG specification, section 9.

export interface Pixels {
  width: number;
  height: number;
  /** RGBA of the pixel at (x, y). */
  at(x: number, y: number): [number, number, number, number];
}

export function readPng(bytes: Buffer): Pixels {
  if (!bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) throw new Error('not a PNG');
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (let off = 8; off < bytes.length; ) {
    const len = bytes.readUInt32BE(off);
    const type = bytes.toString('latin1', off + 4, off + 8);
    const data = bytes.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[12] !== 0) throw new Error('only 8-bit, non-interlaced PNGs');
      channels = data[9] === 6 ? 4 : data[9] === 2 ? 3 : 0;
      if (channels === 0) throw new Error(`colour type ${data[9]} not read`);
    } else if (type === 'IDAT') idat.push(data);
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[y * stride + i - channels]! : 0;
      const b = y > 0 ? out[(y - 1) * stride + i]! : 0;
      const c = y > 0 && i >= channels ? out[(y - 1) * stride + i - channels]! : 0;
      const p = a + b - c;
      const pa = Math.abs(p - a);
      const pb = Math.abs(p - b);
      const pc = Math.abs(p - c);
      const predictor = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter]!;
      out[y * stride + i] = (src[i]! + predictor) & 0xff;
    }
  }
  return {
    width,
    height,
    at: (x, y) => {
      const o = y * stride + x * channels;
      return [out[o]!, out[o + 1]!, out[o + 2]!, channels === 4 ? out[o + 3]! : 255];
    },
  };
}

/** The share of pixels within `tolerance` of `rgb` in each channel. */
export function shareOfColour(p: Pixels, rgb: [number, number, number], tolerance = 6): number {
  let n = 0;
  for (let y = 0; y < p.height; y++) {
    for (let x = 0; x < p.width; x++) {
      const [r, g, b] = p.at(x, y);
      if (Math.abs(r - rgb[0]) <= tolerance && Math.abs(g - rgb[1]) <= tolerance && Math.abs(b - rgb[2]) <= tolerance) n++;
    }
  }
  return n / (p.width * p.height);
}

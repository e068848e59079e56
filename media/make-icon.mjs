#!/usr/bin/env node
// Draws the extension's icon, media/icon.png (128x128 RGBA), and is its source: a white map pin on
// a dark blue rounded square, with a teal check mark in the pin's head ("the pin holds").
// Plain Node (zlib only) so it needs no image tool; run `node media/make-icon.mjs` after changing
// it and commit both files. Each pixel is 4x4 supersampled for smooth edges.
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const SIZE = 128;
const SAMPLES = 4;
const BACKGROUND = [0x1e, 0x3a, 0x5f];
const PIN = [0xff, 0xff, 0xff];
const CHECK = [0x1f, 0xb5, 0x9a];

/** Inside a square of side SIZE - 8 centred on the image, with corners of radius 22. */
function inRoundedSquare(x, y) {
  const half = (SIZE - 8) / 2;
  const radius = 22;
  const dx = Math.max(Math.abs(x - SIZE / 2) - (half - radius), 0);
  const dy = Math.max(Math.abs(y - SIZE / 2) - (half - radius), 0);
  return Math.abs(x - SIZE / 2) <= half && Math.abs(y - SIZE / 2) <= half && dx * dx + dy * dy <= radius * radius;
}

// The pin: a circle (the head) and the triangle from its two tangent points to the tip.
const head = { x: 64, y: 50, r: 32 };
const tip = { x: 64, y: 116 };
const distance = tip.y - head.y;
const tangentY = head.y + (head.r * head.r) / distance;
const tangentHalfWidth = head.r * Math.sqrt(1 - (head.r / distance) ** 2);

function inPin(x, y) {
  if ((x - head.x) ** 2 + (y - head.y) ** 2 <= head.r ** 2) return true;
  if (y < tangentY || y > tip.y) return false;
  const halfWidth = tangentHalfWidth * ((tip.y - y) / (tip.y - tangentY));
  return Math.abs(x - tip.x) <= halfWidth;
}

/** Distance from (x, y) to the segment a–b. */
function segmentDistance(x, y, a, b) {
  const vx = b[0] - a[0];
  const vy = b[1] - a[1];
  const t = Math.min(Math.max(((x - a[0]) * vx + (y - a[1]) * vy) / (vx * vx + vy * vy), 0), 1);
  return Math.hypot(x - (a[0] + t * vx), y - (a[1] + t * vy));
}

const checkPoints = [[49, 51], [60, 62], [80, 40]];
function inCheck(x, y) {
  return segmentDistance(x, y, checkPoints[0], checkPoints[1]) <= 5 || segmentDistance(x, y, checkPoints[1], checkPoints[2]) <= 5;
}

/** The colour and coverage of one sample point: [r, g, b, a] with a in 0..1. */
function sample(x, y) {
  if (!inRoundedSquare(x, y)) return [0, 0, 0, 0];
  if (inCheck(x, y)) return [...CHECK, 1];
  if (inPin(x, y)) return [...PIN, 1];
  return [...BACKGROUND, 1];
}

const raw = Buffer.alloc(SIZE * (SIZE * 4 + 1));
for (let row = 0; row < SIZE; row++) {
  const offset = row * (SIZE * 4 + 1);
  raw[offset] = 0; // PNG filter type "none" for every scanline.
  for (let column = 0; column < SIZE; column++) {
    let r = 0, g = 0, b = 0, a = 0;
    for (let sy = 0; sy < SAMPLES; sy++) {
      for (let sx = 0; sx < SAMPLES; sx++) {
        const [sr, sg, sb, sa] = sample(column + (sx + 0.5) / SAMPLES, row + (sy + 0.5) / SAMPLES);
        r += sr * sa; g += sg * sa; b += sb * sa; a += sa;
      }
    }
    const pixel = offset + 1 + column * 4;
    // Colours are averaged over the covered samples only (straight, not premultiplied, alpha).
    raw[pixel] = a ? Math.round(r / a) : 0;
    raw[pixel + 1] = a ? Math.round(g / a) : 0;
    raw[pixel + 2] = a ? Math.round(b / a) : 0;
    raw[pixel + 3] = Math.round((a / (SAMPLES * SAMPLES)) * 255);
  }
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buffer) {
  let c = 0xffffffff;
  for (const byte of buffer) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header[8] = 8; // bit depth
header[9] = 6; // colour type RGBA
header[10] = 0; // compression
header[11] = 0; // filter method
header[12] = 0; // no interlace

const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', header),
  chunk('IDAT', deflateSync(raw, { level: 9 })),
  chunk('IEND', Buffer.alloc(0)),
]);
writeFileSync(new URL('./icon.png', import.meta.url), png);
console.log(`media/icon.png: ${SIZE}x${SIZE}, ${png.length} bytes`);

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inflateSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { findScenario } from '../../scenarios/named.js';
import { findMutant } from '../../src/selftest/mutants.js';
import { execute } from '../../src/run/execute.js';
import { renderPicture } from '../../src/report/picture.js';
import { HANG_MS } from '../support.js';

/**
 * The picture as a browser draws it: headless Chromium takes a screenshot, and the PNG must
 * show a picture, not a blank page or an error page. Locally the test is skipped without
 * Chromium; on CI (.ci/run installs it) a missing Chromium is a failure, never a skip.
 */
const CHROMIUM = '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
const onCi = (process.env.CI ?? '') !== '';
const run = promisify(execFile);
const scratch: string[] = [];

afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

async function screenshot(html: string): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'tidemark-picture-'));
  scratch.push(dir);
  const page = join(dir, 'picture.html');
  const shot = join(dir, 'shot.png');
  writeFileSync(page, html);
  const profile = mkdtempSync(join(dir, 'profile-'));
  await run(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
      `--screenshot=${shot}`,
      '--window-size=1400,900',
      `file://${page}`,
    ],
    // A bound against a hung browser only: a screenshot takes seconds, many more on a loaded
    // machine. Half of HANG_MS, as the test takes two, so that both stay under vitest's timeout.
    { timeout: HANG_MS / 2, killSignal: 'SIGKILL' },
  ).catch((error: unknown) => {
    // Chromium may complain on stderr (no D-Bus, no GPU) and still write the screenshot.
    if (!existsSync(shot)) throw error;
  });
  expect(existsSync(shot), 'Chromium wrote no screenshot').toBe(true);
  return readFileSync(shot);
}

interface Image {
  readonly width: number;
  readonly height: number;
  /** RGB triples, row by row. */
  readonly rgb: Uint8Array;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Decodes an 8-bit RGB or RGBA, non-interlaced PNG: what Chromium writes. */
function decodePng(png: Buffer): Image {
  expect(png.subarray(0, 8).equals(SIGNATURE), 'not a PNG signature').toBe(true);
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    const data = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const [depth, color, , , interlace] = [data[8], data[9], data[10], data[11], data[12]];
      expect({ depth, interlace }).toEqual({ depth: 8, interlace: 0 });
      expect([2, 6]).toContain(color);
      channels = color === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)] as number;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? (pixels[y * stride + i - channels] as number) : 0;
      const b = y > 0 ? (pixels[(y - 1) * stride + i] as number) : 0;
      const c = y > 0 && i >= channels ? (pixels[(y - 1) * stride + i - channels] as number) : 0;
      const p = a + b - c;
      const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
      const predictor = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter] as number;
      pixels[y * stride + i] = ((line[i] as number) + predictor) & 0xff;
    }
  }
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0, j = 0; i < pixels.length; i += channels, j += 3) rgb.set(pixels.subarray(i, i + 3), j);
  return { width, height, rgb };
}

/** Share of pixels that are not (nearly) white, and of strongly red ones (crosses, witness lines, shading). */
function inks(image: Image): { ink: number; red: number } {
  let ink = 0;
  let red = 0;
  const total = image.width * image.height;
  for (let i = 0; i < image.rgb.length; i += 3) {
    const [r, g, b] = [image.rgb[i] as number, image.rgb[i + 1] as number, image.rgb[i + 2] as number];
    if (r < 235 || g < 235 || b < 235) ink++;
    if (r > 180 && g < 110 && b < 110) red++;
  }
  return { ink: ink / total, red: red / total };
}

describe('the picture in headless Chromium', () => {
  it.runIf(!present && onCi)('has Chromium on CI', () => {
    expect.fail(`no Chromium at ${CHROMIUM}: .ci/run should have installed it (apt-get install -y --no-install-recommends chromium)`);
  });

  it.skipIf(!present)(`renders a legible, non-blank screenshot (skipped when ${CHROMIUM} is missing: install chromium to run it)`, async () => {
    const execution = await execute(findScenario('failed-event-holds-watermark')!.plan, findMutant('max-position-fetched')!.consumer);
    const html = renderPicture(execution, {
      consumer: 'max-position-fetched',
      replay: 'npx tidemark replay --consumer max-position-fetched --scenario failed-event-holds-watermark',
    });
    const [shot, blank] = [await screenshot(html), await screenshot('<!doctype html>\n<html><head><meta charset="utf-8" /><title>blank</title></head><body></body></html>\n')];
    const picture = decodePng(shot);
    expect({ width: picture.width, height: picture.height }).toEqual({ width: 1400, height: 900 });
    const empty = decodePng(blank);
    expect(inks(empty).ink).toBeLessThan(0.001);
    const { ink, red } = inks(picture);
    // Phase backgrounds, lanes, the chart and the legend cover much of the window...
    expect(ink).toBeGreaterThan(0.2);
    // ...and the headline, witness lines and the premature shading put red on it.
    expect(red).toBeGreaterThan(0.0003);
    expect(shot.length).toBeGreaterThan(5 * blank.length);
  });
});

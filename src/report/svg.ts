import type { MutationStep } from '../../model/history.js';

/**
 * SVG pieces of the picture: its palette, number and text formatting, and the glyphs its
 * lanes and legend draw. Pure string building: same input, same bytes.
 */
export const COLOR = {
  adversity: '#fbf0dc',
  drain: '#e4eefa',
  fetch: '#3b6fb6',
  served: '#9db7dc',
  effect: '#2e8b57',
  outbox: '#15918f',
  deadLetter: '#8a4fbf',
  commit: '#555555',
  watermark: '#1c3a96',
  prefix: '#5cb85c',
  lease: '#7b5ea7',
  read: '#8a8a8a',
  caughtUp: '#2e8b57',
  failed: '#d35400',
  crash: '#d62728',
  error: '#f08c00',
  quirk: '#8a4fbf',
  end: '#8b0000',
  mutation: '#0b7a75',
  rebind: '#8a4fbf',
  witness: '#d62728',
  premature: '#e03131',
  behind: '#f5a623',
  grid: '#c8c8c8',
  text: '#222222',
  dim: '#777777',
} as const;

export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));
}

/** Numbers as SVG wants them, the same on every machine. */
export function n(value: number): string {
  const r = Math.round(value * 100) / 100;
  return Object.is(r, -0) ? '0' : String(r);
}

export function fetchGlyph(x: number, y: number, faded: boolean): string {
  return `<rect x="${n(x - 3)}" y="${n(y - 7)}" width="6" height="14" fill="${faded ? '#ffffff' : COLOR.fetch}" stroke="${COLOR.fetch}" stroke-width="1" />`;
}

export function dot(x: number, y: number, color: string): string {
  return `<circle cx="${n(x)}" cy="${n(y)}" r="3.2" fill="${color}" />`;
}

export function ring(x: number, y: number, color: string): string {
  return `<circle cx="${n(x)}" cy="${n(y)}" r="3" fill="#ffffff" stroke="${color}" stroke-width="1.4" />`;
}

export function square(x: number, y: number, color: string): string {
  return `<rect x="${n(x - 3)}" y="${n(y - 3)}" width="6" height="6" fill="#ffffff" stroke="${color}" stroke-width="1.4" />`;
}

export function diamond(x: number, y: number, color: string, filled: boolean): string {
  return `<path d="M${n(x)} ${n(y - 5)} L${n(x + 5)} ${n(y)} L${n(x)} ${n(y + 5)} L${n(x - 5)} ${n(y)} Z" fill="${filled ? color : '#ffffff'}" stroke="${color}" stroke-width="1.4" />`;
}

export function tick(x: number, y: number, watermark: boolean): string {
  return watermark
    ? `<line x1="${n(x)}" y1="${n(y - 11)}" x2="${n(x)}" y2="${n(y + 11)}" stroke="${COLOR.watermark}" stroke-width="4" />`
    : `<line x1="${n(x)}" y1="${n(y - 7)}" x2="${n(x)}" y2="${n(y + 7)}" stroke="${COLOR.commit}" stroke-width="1.6" />`;
}

export function flag(x: number, y: number, color: string): string {
  return (
    `<line x1="${n(x)}" y1="${n(y + 9)}" x2="${n(x)}" y2="${n(y - 12)}" stroke="${color}" stroke-width="1.6" />` +
    `<path d="M${n(x)} ${n(y - 12)} L${n(x + 11)} ${n(y - 8)} L${n(x)} ${n(y - 4)} Z" fill="${color}" />`
  );
}

export function cross(x: number, y: number): string {
  return `<path d="M${n(x - 6)} ${n(y - 6)} L${n(x + 6)} ${n(y + 6)} M${n(x - 6)} ${n(y + 6)} L${n(x + 6)} ${n(y - 6)}" stroke="${COLOR.crash}" stroke-width="2.8" stroke-linecap="round" />`;
}

/** An orange triangle under the mark: filled for a definite error, hollow for an indefinite one. */
export function warn(x: number, y: number, definite: boolean): string {
  return `<path d="M${n(x)} ${n(y + 6)} L${n(x + 5)} ${n(y + 14)} L${n(x - 5)} ${n(y + 14)} Z" fill="${definite ? COLOR.error : '#ffffff'}" stroke="${COLOR.error}" stroke-width="1.4" />`;
}

export function endGlyph(x: number, y: number, color: string): string {
  return `<path d="M${n(x - 3)} ${n(y - 9)} H${n(x)} V${n(y + 9)} H${n(x - 3)}" fill="none" stroke="${color}" stroke-width="2.6" />`;
}

export function mutationGlyph(step: MutationStep, x: number, y: number): string {
  return diamond(x, y, COLOR.mutation, step.mutation !== 'flip');
}

export function rebindGlyph(x: number, y: number): string {
  return `<rect x="${n(x - 4)}" y="${n(y - 4)}" width="8" height="8" fill="${COLOR.rebind}" />`;
}

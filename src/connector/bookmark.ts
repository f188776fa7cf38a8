import type { ApiDescription } from './api.js';
import { bookmarkWatermark, readCursor } from './cursor.js';

/**
 * A STATE's bookmark as the watermark it claims, or why no watermark can be read from it.
 *
 * A bookmark is a value: a cursor value is a point of the order (cursor.ts), and any other
 * value (a page token, an offset) is judged as it is, a token-as-watermark. An object or a
 * list is neither: the path names the place that holds the bookmark, not the bookmark, and
 * judging it would fail a connector for where the description points. It cannot be judged,
 * and the reason names the path, what it held, and the paths inside it that hold a cursor
 * value.
 */
export type BookmarkClaim = { readonly watermark: unknown } | { readonly unjudged: string };

export function bookmarkClaim(api: ApiDescription, bookmark: unknown): BookmarkClaim {
  if (typeof bookmark === 'object' && bookmark !== null) return { unjudged: notAValue(api, bookmark) };
  return { watermark: bookmarkWatermark(api.cursor, bookmark, api.state.inclusive) };
}

function notAValue(api: ApiDescription, held: object): string {
  const path = api.state.bookmark;
  const what = Array.isArray(held) ? 'a list' : 'an object';
  const inside = Object.entries(held)
    .filter(([, v]) => readCursor(api.cursor, v) !== null)
    .map(([k]) => JSON.stringify(`${path}.${k}`));
  const packed = !Array.isArray(held) && (held as { format?: unknown }).format === 'base64/gzip' && typeof (held as { data?: unknown }).data === 'string';
  const hint =
    packed && api.state.compression === 'none' ? 'it is a packed state: state.compression "base64/gzip" reads through it'
    : inside.length > 0 ? `set state.bookmark to the cursor value inside it: ${inside.slice(0, 3).join(' or ')}`
    : `set state.bookmark to where the connector keeps its bookmark, a cursor value (${api.cursor.format})`;
  return `the bookmark path ${JSON.stringify(path)} holds ${what}, not a value: ${JSON.stringify(held).slice(0, 120)}. A bookmark is a cursor value, and ${what} is no point of the order to judge as a watermark: ${hint} (docs/connectors.md, "What the platform does")`;
}

import type { ApiDescription } from './api.js';
import { bookmarkWatermark, CURSOR_FORMATS, KEY_LIMIT, readCursor, type CursorFormat, type CursorRange, type CursorSpec } from './cursor.js';

/**
 * A STATE's bookmark as the watermark it claims, or why no watermark can be read from it.
 *
 * A bookmark is a value, read in state.format (the cursor's, unless the description says
 * otherwise): a cursor value is a point of the order (cursor.ts), and any other value (a page
 * token, an offset) is judged as it is, a token-as-watermark; but one that another format
 * reads as a key of a world is a bookmark the description has not said the format of, and
 * cannot be judged until it does. An object or a list is neither: the path names the place that holds the bookmark, not the bookmark, and
 * judging it would fail a connector for where the description points. It cannot be judged,
 * and the reason names the path, what it held, and the paths inside it that hold a cursor
 * value.
 */
export type BookmarkClaim = { readonly watermark: unknown } | { readonly unjudged: string };

export function bookmarkClaim(api: ApiDescription, bookmark: unknown): BookmarkClaim {
  if (typeof bookmark === 'object' && bookmark !== null) return { unjudged: notAValue(api, bookmark) };
  const spec = stateCursor(api);
  if (bookmark !== undefined && bookmark !== null && readCursor(spec, bookmark) === null) {
    const other = CURSOR_FORMATS.find((format) => format !== spec.format && withinWorlds(readCursor({ ...spec, format }, bookmark)));
    if (other !== undefined) return { unjudged: anotherFormat(api, bookmark, other) };
  }
  return { watermark: bookmarkWatermark(spec, bookmark, api.state.inclusive, Math.round(api.state.lookback * 1000)) };
}

/** How the bookmark is written: state.format, keys spaced as the cursor's. */
export function stateCursor(api: ApiDescription): CursorSpec {
  return { format: api.state.format, secondsPerKey: api.cursor.secondsPerKey };
}

/**
 * A value another format reads as a key some world can hold: a bookmark in that format far
 * likelier than a page token or an offset, which read as 1970 or as nothing.
 */
function withinWorlds(range: CursorRange | null): boolean {
  const at = range === null ? null : range.kind === 'instant' ? range.at : range.from;
  return at !== null && at.floor >= 0 && at.floor <= KEY_LIMIT;
}

/**
 * A bookmark in another format than the description says: read in the one it says, it is
 * no cursor value, and judged as it is, a token-as-watermark would fail a connector for how
 * it is described. The reason says which format reads it, and the field that says so.
 */
function anotherFormat(api: ApiDescription, bookmark: unknown, format: CursorFormat): string {
  const said = api.state.format === api.cursor.format ? `the cursor's format, ${api.state.format}` : `state.format, ${api.state.format}`;
  return (
    `the bookmark ${JSON.stringify(bookmark).slice(0, 80)} at ${JSON.stringify(api.state.bookmark)} is no cursor value in ${said}, but reads as one in ${format}: ` +
    `set state.format to "${format}" in the API description, which reads the bookmark as the instant it names (docs/connectors.md, "The API description")`
  );
}

function notAValue(api: ApiDescription, held: object): string {
  const path = api.state.bookmark;
  const what = Array.isArray(held) ? 'a list' : 'an object';
  const inside = Object.entries(held)
    .filter(([, v]) => readCursor(stateCursor(api), v) !== null)
    .map(([k]) => JSON.stringify(`${path}.${k}`));
  const packed = !Array.isArray(held) && (held as { format?: unknown }).format === 'base64/gzip' && typeof (held as { data?: unknown }).data === 'string';
  const hint =
    packed && api.state.compression === 'none' ? 'it is a packed state: state.compression "base64/gzip" reads through it'
    : inside.length > 0 ? `set state.bookmark to the cursor value inside it: ${inside.slice(0, 3).join(' or ')}`
    : `set state.bookmark to where the connector keeps its bookmark, a cursor value (${api.state.format})`;
  return `the bookmark path ${JSON.stringify(path)} holds ${what}, not a value: ${JSON.stringify(held).slice(0, 120)}. A bookmark is a cursor value, and ${what} is no point of the order to judge as a watermark: ${hint} (docs/connectors.md, "What the platform does")`;
}

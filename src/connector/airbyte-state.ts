/**
 * The shape of an Airbyte state message, as the protocol defines it (AirbyteStateMessage,
 * https://docs.airbyte.com/understanding-airbyte/airbyte-protocol#state--checkpointing):
 *
 * - `type`: `STREAM`, `GLOBAL` or `LEGACY`; absent, the state is read by what it carries.
 * - `STREAM`: `stream` is `{ stream_descriptor: { name, namespace? }, stream_state? }`.
 * - `GLOBAL`: `global` is `{ shared_state?, stream_states: [ per-stream states as above ] }`.
 * - `LEGACY`: `data`, the whole state as one object.
 *
 * A state is an object wherever the protocol says so (`stream_state`, `shared_state`,
 * `data`); a missing or null `stream_state` or `shared_state` is no state. A state of any
 * other shape is one no platform can persist: a run that wrote one cannot be judged, and the
 * reason says what is wrong with it, rather than the run reading it as a missing bookmark.
 */

export type AirbyteStateType = 'STREAM' | 'GLOBAL' | 'LEGACY';
const TYPES: readonly string[] = ['STREAM', 'GLOBAL', 'LEGACY'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function shown(v: unknown): string {
  if (v === undefined || v === null) return v === null ? 'null' : 'absent';
  return `${Array.isArray(v) ? 'an array' : typeof v} ${JSON.stringify(v).slice(0, 60)}`;
}

/** The type a well-shaped state has: its own, or, without one, what it carries. */
export function airbyteStateType(state: Readonly<Record<string, unknown>>): AirbyteStateType {
  if (typeof state.type === 'string' && TYPES.includes(state.type)) return state.type as AirbyteStateType;
  return state.stream !== undefined ? 'STREAM' : state.global !== undefined ? 'GLOBAL' : 'LEGACY';
}

/** What is wrong with an Airbyte STATE message's `state`, or null when the protocol defines its shape. */
export function airbyteStateProblem(state: unknown): string | null {
  if (!isObject(state)) return `its state is ${shown(state)}, not an object`;
  if (state.type !== undefined && !(typeof state.type === 'string' && TYPES.includes(state.type))) return `its type is ${shown(state.type)}, not one of "STREAM", "GLOBAL", "LEGACY"`;
  switch (airbyteStateType(state)) {
    case 'STREAM':
      return state.stream === undefined ? 'it is a STREAM state without a stream' : streamStateProblem(state.stream, 'its stream');
    case 'GLOBAL': {
      const global = state.global;
      if (!isObject(global)) return `it is a GLOBAL state whose global is ${shown(global)}, not an object`;
      if (!(global.shared_state === undefined || global.shared_state === null || isObject(global.shared_state))) return `its global.shared_state is ${shown(global.shared_state)}, not an object`;
      if (!Array.isArray(global.stream_states)) return `its global has no list of stream_states (it is ${shown(global.stream_states)})`;
      for (const [i, s] of global.stream_states.entries()) {
        const problem = streamStateProblem(s, `its global.stream_states[${i}]`);
        if (problem !== null) return problem;
      }
      return null;
    }
    case 'LEGACY':
      return isObject(state.data) ? null : `it is a LEGACY state whose data is ${shown(state.data)}, not an object`;
  }
}

/** An AirbyteStreamState: a stream descriptor with a name, and a state that is an object, if any. */
function streamStateProblem(s: unknown, where: string): string | null {
  if (!isObject(s)) return `${where} is ${shown(s)}, not an object`;
  if (!isObject(s.stream_descriptor)) return `${where} has no stream_descriptor (it is ${shown(s.stream_descriptor)})`;
  if (typeof s.stream_descriptor.name !== 'string') return `${where}.stream_descriptor has no name (it is ${shown(s.stream_descriptor.name)})`;
  if (!(s.stream_state === undefined || s.stream_state === null || isObject(s.stream_state))) return `${where}.stream_state is ${shown(s.stream_state)}, not an object`;
  return null;
}

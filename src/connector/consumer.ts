import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scratchDir } from '../adapter/process/scratch.js';
import { join } from 'node:path';
import type { Resume } from '../../model/api.js';
import type { Binding } from '../../model/binding.js';
import type { EventRef, SourceEvent } from '../../model/event.js';
import { NOTHING, readCut } from '../../model/cut.js';
import type { Consumer, WorkerWorld } from '../adapter/consumer.js';
// The sync directories are among the bridge's stores: whatever ends the run removes them with the blackbox stores.
import { stores as syncDirs } from '../adapter/process/bridge.js';
import { apiProfile, type ApiDescription } from './api.js';
import { bookmarkClaim } from './bookmark.js';
import { firstKeyFrom, readCursor, renderCursor } from './cursor.js';
import { ConnectorFailedError, ConnectorUnjudgedError } from './errors.js';
import { HarnessError } from '../adapter/errors.js';
import { askedBy, errorResponse, pageResponse, type Response } from './http.js';
import { catalogOf, persist, readMessage, stateProblem, syncArgs, type ConnectorKind } from './messages.js';
import { ConnectorOutputs, callLabel, type WorldOutput } from './output.js';
import { ConnectorProcess } from './process.js';
import { ProgressWatch } from './progress.js';
import { lineLimitText } from '../adapter/process/lines.js';

/**
 * A Singer tap or an Airbyte source, unmodified, as a tidemark consumer. tidemark plays the
 * platform: each `run(world)` is one sync attempt (one incarnation). It takes the
 * connection's lock (the lease), reads the state the platform last persisted, writes the
 * config (with the base URL of its own HTTP server), the catalog and the state file, starts
 * the connector in a process group of its own, and serves its HTTP requests from the
 * simulated source, each request one world fetch, answered one at a time in arrival order.
 *
 * What the connector prints on stdout is read as the platform reads it: a RECORD is the
 * event's effect (an emit to the sink, at least once); a STATE is persisted once every record
 * before it is durable, which it is, since lines are handled in order, each emit done before
 * the next line: a fenced commit of the bookmark, read as a watermark, and of a reference to
 * the raw state (see Shared.states), from which the next attempt writes the state file. A clean exit
 * after the last page is the caught-up claim; an error exit is a failed attempt, and the
 * world starts the next one from the persisted state, as a platform retries.
 *
 * A crash the world places is a real SIGKILL of the connector's process group: at a fetch,
 * before the request is answered (crash-before) or after the page was served and before the
 * response reaches the connector (crash-after); at a record's emit or a state's commit,
 * between a RECORD and the next STATE.
 */
export interface ConnectorOptions {
  /** How long the connector may work between two world calls before it is declared stalled. Default 10,000 ms. */
  readonly stallMs?: number;
}

/** What a connector consumer saw over its whole run, for the CLI to report. */
export interface ConnectorStats {
  /** Requests that arrived while another was still unanswered. */
  concurrent: number;
  syncs: number;
  /** STATE messages written after records whose state held no value at the bookmark's path, and the first one's miss. */
  unbookmarked: number;
  firstMiss: string | null;
}

/**
 * What one world's STATE messages said of the bookmark: whether any held a value at its path,
 * and those written after records that held none, with where the path found nothing first.
 */
interface Bookmarks {
  records: boolean;
  matched: boolean;
  missed: number;
  firstMiss: string | null;
}

/** A stopped attempt: the connector is killed, and the platform's next attempt starts from the persisted state. */
const STOP = 'stop';

/** Attempts in a row that end on their own with nothing durable, after which the connector is declared unrunnable. */
const SILENT_LIMIT = 5;

/** Kept lines (schemas, logs, traces) quoted when a connector cannot be judged. */
const KEPT = 5;

interface Shared {
  readonly stats: ConnectorStats;
  /** Some attempt printed a RECORD or a STATE line. */
  spoke: boolean;
  /** Attempts in a row that ended on their own with nothing durable. */
  inARow: number;
  /** Each world's served events by id (a world's binding object is its own), to map records back to versions. */
  readonly served: WeakMap<Binding, Map<string, Served[]>>;
  /**
   * Each world's persisted states (keyed by the world's source offer, one object per world),
   * in the order they were offered for commit. The store holds an index into this list, not
   * the state: a connector's state may hold the wall clock (faros-airbyte-cdk writes when a
   * stream was last synced into it), and only what is the same in every run may go into the
   * history. The index is taken before the commit, so a commit that took effect without the
   * attempt learning it (a crash after it) still finds its state.
   */
  readonly states: WeakMap<object, unknown[]>;
  /** What the connector said in each sync attempt of the recent worlds, for the failure text. */
  readonly outputs: ConnectorOutputs;
  /** Each world's bookmarks (keyed by its source offer, as states are). */
  readonly bookmarks: WeakMap<object, Bookmarks>;
}

const statsOf = new WeakMap<object, ConnectorStats>();
const outputsOf = new WeakMap<object, ConnectorOutputs>();

/** The connector's own lines under a failure of this history (see output.ts); none for any other consumer. */
export function connectorOutput(consumer: object, history: Parameters<ConnectorOutputs['forHistory']>[0]): readonly string[] {
  return outputsOf.get(consumer)?.forHistory(history) ?? [];
}

/** What a consumer made by connectorConsumer saw; undefined for any other consumer. */
export function connectorStats(consumer: object): ConnectorStats | undefined {
  return statsOf.get(consumer);
}

export function connectorConsumer(kind: ConnectorKind, command: string, api: ApiDescription, options: ConnectorOptions = {}): Consumer {
  const shared: Shared = {
    stats: { concurrent: 0, syncs: 0, unbookmarked: 0, firstMiss: null },
    spoke: false,
    inARow: 0,
    served: new WeakMap(),
    states: new WeakMap(),
    outputs: new ConnectorOutputs(),
    bookmarks: new WeakMap(),
  };
  const consumer: Consumer = {
    name: kind === 'singer' ? 'singer-tap' : 'airbyte-source',
    capabilities: { delivery: 'at-least-once', contracts: [...api.source.contracts], profile: apiProfile(api) },
    stallMs: options.stallMs ?? 10_000,
    run: (world) => new Attempt(kind, command, api, world, shared).run(),
  };
  statsOf.set(consumer, shared.stats);
  outputsOf.set(consumer, shared.outputs);
  return consumer;
}

type Input =
  | { readonly kind: 'line'; readonly text: string }
  | { readonly kind: 'request'; readonly req: IncomingMessage; readonly res: ServerResponse }
  | { readonly kind: 'end'; readonly code: number | null; readonly signal: NodeJS.Signals | null }
  /** A line on stdout outgrew the limit (src/adapter/process/lines.ts): nothing after it is read. */
  | { readonly kind: 'overflow' };

/** One sync attempt: one incarnation, one connector process. */
class Attempt {
  private release: (() => void) | null = null;
  private proc: ConnectorProcess | null = null;
  private server: Server | null = null;
  private dir: string | null = null;
  private readonly inputs: Input[] = [];
  private wake: (() => void) | null = null;
  private stopped = false;
  private generation = 0;
  /** The platform's persisted state for this binding: what the next state file holds. */
  private persisted: unknown = null;
  /** The watermark as stored under this binding: what the compare-and-set of the next commit expects. */
  private stored: unknown = null;
  /**
   * What the attempt's first query from `since` is held to (lookbackShort), until it comes:
   * the watermark the attempt started from, all the connector can rely on then. Later queries
   * may start from what the attempt itself read since.
   */
  private resumedFrom: unknown = null;
  /** The last response served was the end of the stream. */
  private atEnd = false;
  /** Something this attempt did took effect: an emit or a commit. */
  private durable = false;
  private unanswered = 0;
  private lastInput = 'none yet';
  private readonly kept: string[] = [];
  private outputKept = false;
  /** Whether the connector is getting anywhere in this attempt (progress.ts). */
  private readonly progress = new ProgressWatch();

  constructor(
    private readonly kind: ConnectorKind,
    private readonly command: string,
    private readonly api: ApiDescription,
    private readonly world: WorkerWorld,
    private readonly shared: Shared,
  ) {}

  async run(): Promise<void> {
    if (this.world.signal.aborted) return;
    // The world ended this incarnation (a crash it placed, a claim, the end of a phase): a real kill.
    this.world.signal.addEventListener('abort', () => this.stop(), { once: true });
    try {
      await this.sync();
    } catch (error) {
      // The platform's own calls failing (the lock, the state store, the destination) end the
      // attempt; the next one starts from what is persisted.
      if (isWorldError(error)) return;
      // The connector failed, or cannot be judged: its doing, as the world is told.
      if (error instanceof ConnectorFailedError || error instanceof ConnectorUnjudgedError) throw error;
      // Anything else is the platform's own code failing: a harness error, never retried as
      // if the connector's attempt had failed.
      throw new HarnessError(`the ${this.kind === 'singer' ? 'Singer' : 'Airbyte'} platform, running sync attempt ${this.actor}`, error);
    } finally {
      this.stop();
    }
  }

  private async sync(): Promise<void> {
    const world = this.world;
    for (;;) {
      try {
        this.generation = await this.call(() => world.lease(), () => callLabel('lease'));
        break;
      } catch (error) {
        // Another attempt holds the connection's lock: wait for it, as a platform does.
        if (!(isWorldError(error) && error.code === 'conflict')) throw error;
      }
    }
    const state = await this.call(() => world.load(), () => callLabel('load'));
    const anchor = state.anchor;
    this.stored = state.watermark?.binding === world.fingerprint ? state.watermark.value : null;
    this.resumedFrom = this.stored;
    // State is per binding: another binding's state is another connection's.
    this.persisted = anchor?.binding === world.fingerprint && anchor.token !== null ? this.statesHere()[(JSON.parse(anchor.token) as StateToken).state] : null;
    await this.start();
    this.shared.stats.syncs++;
    for (;;) {
      const input = await this.next();
      if (input.kind === 'overflow') {
        throw new ConnectorUnjudgedError(
          `the connector wrote a line of more than ${lineLimitText()} on stdout (last: ${this.lastInput}): tidemark reads a line of at most ${lineLimitText()}, and no record or state is that long. Stopped there, so that its memory stays bounded${this.proc?.tail() ?? ''}`,
        );
      }
      const outcome = input.kind === 'line' ? await this.line(input.text) : input.kind === 'request' ? await this.request(input.req, input.res) : await this.end(input.code, input.signal);
      if (outcome === STOP) return;
      const stuck = this.progress.stuck();
      if (stuck !== null) return this.stuck(stuck);
    }
  }

  /** Writes the sync's files, starts the server, then the connector. */
  private async start(): Promise<void> {
    const dir = mkdtempSync(join(scratchDir(), 'tidemark-sync-'));
    syncDirs.add(dir);
    this.dir = dir;
    const server = createServer((req, res) => this.arrived(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    if (this.stopped) return;
    const port = (server.address() as AddressInfo).port;
    const files = { config: join(dir, 'config.json'), catalog: join(dir, 'catalog.json'), state: this.persisted === null ? null : join(dir, 'state.json') };
    writeFileSync(files.config, JSON.stringify({ ...this.api.config.values, [this.api.config.baseUrl]: `http://127.0.0.1:${port}` }, null, 2));
    writeFileSync(files.catalog, JSON.stringify(catalogOf(this.kind, this.api), null, 2));
    if (files.state !== null) writeFileSync(files.state, JSON.stringify(this.persisted, null, 2));
    this.proc = new ConnectorProcess(
      this.command,
      syncArgs(this.kind, files),
      (text) => this.push({ kind: 'line', text }),
      (code, signal) => this.push({ kind: 'end', code, signal }),
      () => this.push({ kind: 'overflow' }),
    );
  }

  /**
   * A request is queued one macrotask turn after it arrived: whatever the connector wrote to
   * stdout before it sent the request is in the pipe by then and is read first, so records
   * and requests are handled in the order the connector made them, however the two pipes'
   * events interleave. While stdout is paused (lines waiting to be handled), it is queued a
   * turn after stdout flows again, for the same reason.
   */
  private arrived(req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    if (this.unanswered++ > 0) this.shared.stats.concurrent++;
    const queue = (): void => this.push({ kind: 'request', req, res });
    if (this.proc === null) setImmediate(queue);
    else this.proc.afterFlowing(queue);
  }

  private push(input: Input): void {
    if (this.stopped) return;
    this.inputs.push(input);
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private async next(): Promise<Input> {
    while (this.inputs.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
    const input = this.inputs.shift() as Input;
    // Taken off the queue: the connector's stdout may flow again (process.ts).
    if (input.kind === 'line') this.proc?.handled(input.text.length);
    return input;
  }

  /** One HTTP request: one world fetch, its page rendered as the API's response. */
  private async request(req: IncomingMessage, res: ServerResponse): Promise<typeof STOP | void> {
    const api = this.api;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    this.lastInput = `GET ${url.pathname}${url.search}`;
    if (url.pathname !== api.request.path) {
      this.keep(`request for ${url.pathname}, which the API does not serve (it serves ${api.request.path})`);
      this.progress.request(this.lastInput, []);
      return this.answer(res, { status: 404, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: 'not found' }) });
    }
    const asked = askedBy(api, url.searchParams, this.world.source.pageSize);
    if ('problem' in asked) {
      this.progress.request(this.lastInput, []);
      return this.answer(res, errorResponse(api, 'bad-request', asked.problem));
    }
    const short = this.lookbackShort(asked.fetch.resume, url);
    if (short !== null) throw new ConnectorUnjudgedError(short);
    if (!(await this.renew())) return STOP;
    let page;
    try {
      page = await this.call(() => this.world.fetch(asked.fetch), (p) => callLabel('fetch', p.events.length));
    } catch (error) {
      if (!isWorldError(error)) throw error;
      this.atEnd = false;
      this.progress.request(this.lastInput, []);
      return this.answer(res, errorResponse(api, error.code, error.message));
    }
    this.progress.request(this.lastInput, page.events.map((e) => `${e.id}@${e.version}`));
    const served = this.servedHere();
    for (const e of page.events) {
      const versions = served.get(e.id) ?? [];
      if (!versions.some((v) => v.version === e.version)) versions.push({ version: e.version, key: e.key[0] ?? 0, payload: e.payload });
      served.set(e.id, versions);
    }
    this.atEnd = page.next === null || (this.api.source.order === 'newest-first' && this.reachesStored(page.events));
    const base = new URL(`http://${req.headers.host ?? '127.0.0.1'}`);
    this.answer(res, pageResponse(api, page, new URL(`${url.pathname}${url.search}`, base)));
  }

  /**
   * A description that says the connector reads again behind its bookmark (state.lookback) is
   * taken at its word for what the bookmark claims: only what lies the lookback behind it. An
   * attempt's first query from `since` that starts past the first record the claim it started
   * from leaves open shows it does not read so far back, at least not on this sync: judged by
   * the weaker claim, a bug the bookmark itself would show (one claiming its ties done, say)
   * would pass. It cannot be judged, and the reason names the field.
   */
  private lookbackShort(resume: Resume, url: URL): string | null {
    const { lookback, bookmark } = this.api.state;
    if (lookback === 0 || (resume.kind !== 'key-gte' && resume.kind !== 'key-gt') || (resume.skip ?? 0) > 0) return null;
    const from = this.resumedFrom;
    this.resumedFrom = null;
    const reading = readCut(from, 1);
    if (!('cut' in reading) || reading.cut === NOTHING) return null;
    // Keys are whole: a claim through k leaves k + 1 open, one before k leaves k itself. No
    // record lies before key 0 (a connector's keys run from it), so a query clamped to a start
    // date there (max(bookmark - lookback, start_date)) leaves nothing out.
    const at = reading.cut.key[0] ?? 0;
    const open = Math.max(0, reading.cut.top ? Math.floor(at) + 1 : Math.ceil(at));
    const asked = (resume.key[0] ?? 0) + (resume.kind === 'key-gt' ? 1 : 0);
    if (asked <= open) return null;
    const since = this.api.request.params.since ?? 'since';
    return (
      `the API description says the connector reads again ${lookback} s behind its bookmark (state.lookback), so the bookmark it started this sync from (the value at ${JSON.stringify(bookmark)} in its state) claims nothing from ${renderCursor(this.api.cursor, open)} on; ` +
      `but it asked ${since}=${url.searchParams.get(since) ?? '?'}, which starts after that (at ${renderCursor(this.api.cursor, asked)}), so it does not read so far back, at least not on this sync. ` +
      `Judged by the weaker claim, what its bookmark alone claims would go unjudged: set state.lookback to what the connector reads again, and state.inclusive to what its bookmark claims at its own value (an exclusive since reads from after it) (docs/connectors.md, "Lookback windows")`
    );
  }

  /**
   * Whether a newest-first read has come down to its stored watermark: a page with a record at
   * or below the watermark's key, one the watermark claims done or one at its own key (a tap
   * that stops at the very record its bookmark names, whose ties are read already). A sync
   * stops there, its read complete, and a clean exit then claims it is caught up, as an
   * ascending sync's does after the last page. (Treating an exit as a claim only asks more of
   * the connector: what it claims is judged.)
   */
  private reachesStored(events: readonly SourceEvent[]): boolean {
    const reading = readCut(this.stored, 1);
    if (!('cut' in reading) || reading.cut === NOTHING) return false;
    const at = reading.cut.key[0] ?? 0;
    return events.some((e) => (e.key[0] ?? 0) <= at);
  }

  private answer(res: ServerResponse, response: Response): void {
    this.unanswered--;
    if (this.stopped) return;
    res.writeHead(response.status, response.headers);
    res.end(response.body);
  }

  /** One stdout line, read as the platform reads it. */
  private async line(text: string): Promise<typeof STOP | void> {
    const message = readMessage(this.kind, text);
    switch (message.kind) {
      case 'kept':
        return this.keep(text);
      case 'foreign':
        throw new ConnectorUnjudgedError(`the connector speaks another protocol: its stdout holds ${message.why}`);
      case 'malformed':
        throw new ConnectorUnjudgedError(`the connector's stdout holds ${message.why}, which no platform reads`);
      case 'record': {
        this.shared.spoke = true;
        this.lastInput = 'a RECORD';
        const data = message.data;
        const raw = own(data, this.api.record.payload);
        const payload = typeof raw === 'string' ? raw : JSON.stringify(raw ?? data);
        try {
          // A record of another stream is no effect of this stream's events: the platform
          // writes it elsewhere. It is filed under a name no event has, a phantom.
          const { ref, key } = message.stream === this.api.stream ? this.effectOf(data, payload) : { ref: { id: `${message.stream}/${String(own(data, this.api.record.id))}`, version: 1 }, key: undefined };
          if (message.stream === this.api.stream) this.bookmarksHere().records = true;
          this.progress.record(`a RECORD of ${ref.id}`, `${ref.id}@${ref.version}`);
          await this.call(() => this.world.emit(ref, payload, key), () => callLabel('emit', ref.id));
        } catch (error) {
          // The destination failed: the platform fails the attempt, whatever became of the record.
          if (isWorldError(error)) return STOP;
          throw error;
        }
        this.progressed();
        return;
      }
      case 'state': {
        this.shared.spoke = true;
        this.lastInput = 'a STATE';
        const malformed = stateProblem(this.kind, message.message);
        if (malformed !== null) {
          // No platform persists it: what the next attempt would start from is undefined, so nothing after it can be judged.
          const protocol = this.kind === 'airbyte' ? 'the Airbyte protocol' : 'Singer';
          throw new ConnectorUnjudgedError(`the connector wrote a STATE whose shape ${protocol} does not define (docs/connectors.md, "What the platform does"): ${malformed}; the line: ${text.slice(0, 200)}`);
        }
        const { state, bookmark, miss } = persist(this.kind, this.api, this.persisted, message.message);
        this.progress.state('a STATE', JSON.stringify(state ?? null));
        this.sawBookmark(miss);
        const claim = bookmarkClaim(this.api, bookmark);
        if ('unjudged' in claim) throw new ConnectorUnjudgedError(claim.unjudged);
        const value = claim.watermark;
        const binding = this.world.fingerprint;
        if (!(await this.renew())) return STOP;
        const states = this.statesHere();
        const token: StateToken = { bookmark: bookmark ?? null, state: states.push(state ?? null) - 1 };
        await this.call(() =>
          this.world.commit(
            [
              { op: 'watermark', binding, value, expect: this.stored },
              { op: 'anchor', binding, token: JSON.stringify(token), watermark: value },
            ],
            { fence: this.generation },
          ),
          () => callLabel('commit'),
        );
        this.persisted = state ?? null;
        this.stored = value;
        this.progressed();
        return;
      }
    }
  }

  /** The connector exited: after the last page, cleanly, that is the caught-up claim. */
  private async end(code: number | null, signal: NodeJS.Signals | null): Promise<typeof STOP | void> {
    const tail = this.proc?.tail() ?? '';
    this.keepOutput();
    this.proc = null;
    const how = signal ?? `code ${code}`;
    if (!this.shared.spoke) {
      // Nothing it printed is a record or a state: no sync of it can be judged.
      const silent = ++this.shared.inARow;
      if (code === 0 || silent >= SILENT_LIMIT) {
        const kept = this.kept.length > 0 ? `; its last other lines: ${this.kept.join(' | ')}` : '';
        throw new ConnectorUnjudgedError(
          `the connector printed no ${this.kind === 'singer' ? 'Singer' : 'Airbyte'} RECORD or STATE line: it exited with ${how}${code === 0 ? '' : `, ${silent} times in a row`} (last: ${this.lastInput})${kept}${tail}`,
        );
      }
    } else if (!this.durable && code !== 0 && ++this.shared.inARow >= SILENT_LIMIT) {
      throw new ConnectorUnjudgedError(`the connector exits with ${how} before anything it prints takes effect, ${SILENT_LIMIT} attempts in a row (last: ${this.lastInput})${tail}`);
    }
    if (code === 0) {
      if (!this.atEnd) return STOP; // a sync that stopped before the end: the next one goes on
      this.unbookmarkedSync();
      await this.call(() => this.world.caughtUp(), () => null);
      return STOP;
    }
    // Only what is the same in every run goes into the history: not the stderr.
    throw new ConnectorFailedError(`the connector exited with ${how}`);
  }

  /**
   * The connector loops without progress (progress.ts): it is killed, and the attempt holds
   * the world, stuck, until the world ends the phase as hung with the reason: the run is
   * unknown, with the timeline of the loop. The reason names only what the connector sent,
   * the same on every run.
   */
  private async stuck(reason: string): Promise<void> {
    this.keepOutput();
    this.proc?.kill();
    this.proc = null;
    this.release ??= this.world.hold(() => reason);
    this.world.stuck(reason);
    const signal = this.world.signal;
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }

  /** Renews the connection's lock; false when another attempt took it meanwhile: this one must stop. */
  private async renew(): Promise<boolean> {
    try {
      return (await this.call(() => this.world.lease(), () => callLabel('lease'))) === this.generation;
    } catch (error) {
      if (isWorldError(error)) return false;
      throw error;
    }
  }

  /**
   * A STATE's bookmark, found or not. One written after this stream's records whose state
   * holds no value at the bookmark's path is persisted as a null watermark, which claims
   * nothing done: counted, for the check's note, with where the path found nothing.
   */
  private sawBookmark(miss: string | null): void {
    const seen = this.bookmarksHere();
    if (miss === null) {
      seen.matched = true;
      return;
    }
    if (!seen.records) return;
    seen.missed++;
    seen.firstMiss ??= miss;
    this.shared.stats.unbookmarked++;
    this.shared.stats.firstMiss ??= miss;
  }

  /**
   * A sync that caught up, in a world whose STATE messages after its records never held a
   * value at the bookmark's path: every watermark was null, so the watermark checks had
   * nothing to judge. A connector that writes no bookmark at all after writing records is
   * far likelier a description whose state.bookmark is not where this connector keeps it:
   * the run cannot be judged, and says where the path found nothing.
   */
  private unbookmarkedSync(): void {
    const seen = this.bookmarksHere();
    if (!seen.records || seen.matched || seen.missed === 0) return;
    throw new ConnectorUnjudgedError(
      `the bookmark path ${JSON.stringify(this.api.state.bookmark)} matched no STATE the connector wrote: of the ${seen.missed} it wrote after its records, before it caught up, none held a value there (in the first, ${seen.firstMiss}). ` +
        'Every watermark would be null, leaving the watermark checks nothing to judge: set state.bookmark in the API description to where this connector keeps its bookmark (docs/connectors.md, "What the platform does")',
    );
  }

  private bookmarksHere(): Bookmarks {
    let seen = this.shared.bookmarks.get(this.world.source);
    if (seen === undefined) this.shared.bookmarks.set(this.world.source, (seen = { records: false, matched: false, missed: 0, firstMiss: null }));
    return seen;
  }

  private progressed(): void {
    this.durable = true;
    this.shared.inARow = 0;
  }

  /**
   * The event version a record is the effect of, and the key its cursor value claims. The
   * cursor value is read as a key, as a bookmark is (cursor.ts): the version is the served
   * one at that key (a date: in that day), the one with the record's content among several;
   * with none there, the served version with its content, else the latest served. Whether the
   * record carries what was served, its key and its content, is the checker's to judge
   * against ground truth (model/checks/effects.ts): a cursor value the version was never
   * served at is a divergent-duplicate. A record of no served id is still an effect: the
   * checker calls it a phantom.
   */
  private effectOf(data: Readonly<Record<string, unknown>>, payload: string): { readonly ref: EventRef; readonly key: readonly number[] | null } {
    const raw = own(data, this.api.record.id);
    const id = typeof raw === 'string' ? raw : raw === undefined ? '' : JSON.stringify(raw);
    const versions = this.servedHere().get(id) ?? [];
    const range = readCursor(this.api.cursor, own(data, this.api.record.cursor));
    const at = (v: Served): boolean =>
      range === null ? false
      : range.kind === 'instant' ? range.at.exact && v.key === range.at.floor
      : firstKeyFrom(range.from) <= v.key && v.key < firstKeyFrom(range.to);
    const there = versions.filter(at);
    const found = there.find((v) => v.payload === payload) ?? there.at(-1) ?? versions.find((v) => v.payload === payload) ?? versions.at(-1);
    // A date names a day, not a key: the record carries the key it was served at when the day is its version's.
    // A value between two keys is no key any version was served at: it carries the point it names.
    const key = range === null ? null : found !== undefined && at(found) ? [found.key] : [(range.kind === 'instant' ? range.at : range.from).approx];
    return { ref: { id, version: found?.version ?? 1 }, key };
  }

  private servedHere(): Map<string, Served[]> {
    let served = this.shared.served.get(this.world.binding);
    if (served === undefined) this.shared.served.set(this.world.binding, (served = new Map()));
    return served;
  }

  private get actor(): string {
    return `${this.world.worker}#${this.world.incarnation}`;
  }

  private get output(): WorldOutput {
    return this.shared.outputs.of(this.world.source);
  }

  /** What this attempt said, kept once, when it ends: its kept lines, then the end of its stderr. */
  private keepOutput(): void {
    if (this.outputKept) return;
    this.outputKept = true;
    this.output.said(this.actor, [...this.kept, ...(this.proc?.stderrLines() ?? []).map((l) => `stderr: ${l}`)]);
  }

  private statesHere(): unknown[] {
    let states = this.shared.states.get(this.world.source);
    if (states === undefined) this.shared.states.set(this.world.source, (states = []));
    return states;
  }

  private keep(text: string): void {
    this.kept.push(text.slice(0, 300));
    if (this.kept.length > KEPT) this.kept.shift();
  }

  /**
   * A world call: the hold is released while the world runs it, and taken again once it
   * answers, since from then on the connector works outside the world until its next call.
   */
  private async call<T>(f: () => Promise<T>, label: (value: T) => string | null): Promise<T> {
    this.release?.();
    this.release = null;
    const rehold = (): void => {
      if (!this.stopped) this.release = this.world.hold(() => `the connector's last: ${this.lastInput}${this.proc?.tail() ?? ''}`);
    };
    try {
      const value = await f();
      // The call returned to this incarnation: part of the world's signature (output.ts).
      const said = label(value);
      if (said !== null) this.output.returned(this.actor, said);
      rehold();
      return value;
    } catch (error) {
      rehold();
      throw error;
    }
  }

  /** Kills the connector, closes the server, removes the sync's files. */
  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.keepOutput();
    this.proc?.kill();
    this.proc = null;
    this.server?.closeAllConnections();
    this.server?.close();
    this.server = null;
    if (this.dir !== null) {
      rmSync(this.dir, { recursive: true, force: true });
      syncDirs.delete(this.dir);
    }
    this.release?.();
    this.release = null;
  }
}

/** One served version of an event: its version number, its key and its content. */
interface Served {
  readonly version: number;
  readonly key: number;
  readonly payload: string;
}

/** A record's own field: a name every object inherits (`toString`) is no field of a record that lacks it. */
function own(data: Readonly<Record<string, unknown>>, field: string): unknown {
  return Object.hasOwn(data, field) ? data[field] : undefined;
}

/** What the store's anchor holds for a persisted state: its bookmark, to read in a timeline, and its index among the world's states. */
interface StateToken {
  readonly bookmark: unknown;
  readonly state: number;
}

/** By name, not instanceof: what the world rejects with. */
function isWorldError(error: unknown): error is Error & { readonly code: string } {
  return error instanceof Error && error.name === 'WorldError';
}

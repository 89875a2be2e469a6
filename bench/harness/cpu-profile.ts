/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`) into its top functions by self time, and self
 * time by where the code lives (portcullis' own modules, each dependency, Node's internals, V8's
 * builtins, GC). Locations in the built gateway (dist/*.js) are mapped back to src/*.ts lines through
 * the build's source maps, so the report names the TypeScript a reader would open.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
  parent?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  function: string;
  /** `src/stages/validate.ts:88`, `node_modules/koa/lib/application.js:12`, `node:internal/...`, or ''. */
  location: string;
  /** What owns the code: `portcullis`, a package name, `node`, `v8` (builtins and native), `gc`, `program`. */
  owner: string;
  selfMs: number;
  /** Share of the busy (non-idle) time. */
  selfPct: number;
}

export interface ProfileSummary {
  /** Wall time the profile covers, ms. */
  totalMs: number;
  /** Share of that time the main thread was busy (not idle). */
  busyPct: number;
  samples: number;
  top: ProfileEntry[];
  /**
   * portcullis' own functions by inclusive time (self + what they call synchronously; an async stage's
   * awaited work is not under it), as a share of busy time: where the request's CPU goes, stage by stage.
   */
  inclusive: ProfileEntry[];
  byOwner: Array<{ owner: string; selfMs: number; selfPct: number }>;
}

// Source maps ---------------------------------------------------------------------------------------------

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Decodes a source map's `mappings` into, per generated line, [column, sourceIndex, originalLine] triples. */
function decodeMappings(mappings: string): Array<Array<[number, number, number]>> {
  const lines: Array<Array<[number, number, number]>> = [];
  let source = 0;
  let origLine = 0;
  for (const line of mappings.split(';')) {
    const segs: Array<[number, number, number]> = [];
    let col = 0;
    for (const seg of line.split(',')) {
      if (seg === '') continue;
      const values: number[] = [];
      let value = 0;
      let shift = 0;
      for (const ch of seg) {
        const digit = B64.indexOf(ch);
        value += (digit & 31) << shift;
        if (digit & 32) shift += 5;
        else {
          values.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      col += values[0] ?? 0;
      if (values.length >= 4) {
        source += values[1]!;
        origLine += values[2]!;
        segs.push([col, source, origLine]);
      }
    }
    lines.push(segs);
  }
  return lines;
}

interface SourceMap {
  sources: string[];
  lines: Array<Array<[number, number, number]>>;
  dir: string;
}

const maps = new Map<string, SourceMap | null>();

function sourceMapFor(file: string): SourceMap | null {
  if (!maps.has(file)) {
    let map: SourceMap | null = null;
    try {
      if (existsSync(`${file}.map`)) {
        const raw = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[]; mappings: string; sourceRoot?: string };
        map = { sources: raw.sources, lines: decodeMappings(raw.mappings), dir: dirname(file) };
      }
    } catch {
      map = null;
    }
    maps.set(file, map);
  }
  return maps.get(file)!;
}

/** `dist/stages/validate.js` line/column -> `src/stages/validate.ts:<line>` (1-based), when mapped. */
function original(file: string, line: number, column: number, root: string): string | null {
  const map = sourceMapFor(file);
  const segs = map?.lines[line];
  if (!map || !segs || segs.length === 0) return null;
  let hit = segs[0]!;
  for (const s of segs) if (s[0] <= column) hit = s;
  const src = resolve(map.dir, map.sources[hit[1]] ?? '');
  return `${relative(root, src)}:${hit[2] + 1}`;
}

// Summary ------------------------------------------------------------------------------------------------

/**
 * Who owns a frame's code and where it is: `portcullis` with its src/*.ts line, a package with its file,
 * `node` with its internal module, `v8` (builtins, native), or `gc`, `program`, `idle`. bench/alloc.ts reads
 * the heap profiler's frames the same way.
 */
export function ownerOf(frame: CallFrame, root: string): { owner: string; location: string } {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return { owner: 'gc', location: '' };
  if (functionName === '(program)' || functionName === '(root)') return { owner: 'program', location: '' };
  if (functionName === '(idle)') return { owner: 'idle', location: '' };
  if (url === '') return { owner: 'v8', location: '' };
  if (url.startsWith('node:')) return { owner: 'node', location: `${url}:${frame.lineNumber + 1}` };
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + '/node_modules/'.length);
    const parts = rest.split('/');
    const pkg = parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
    return { owner: pkg, location: `node_modules/${rest}:${frame.lineNumber + 1}` };
  }
  const mapped = original(file, frame.lineNumber, frame.columnNumber, root);
  const location = mapped ?? `${relative(root, file)}:${frame.lineNumber + 1}`;
  return { owner: 'portcullis', location };
}

/**
 * `window` ([from, to] in microseconds of the monotonic clock, which `process.hrtime` and V8's profiler
 * share on Linux) keeps only the samples taken under load, leaving out start-up and warm-up.
 */
export function summariseProfile(path: string, root: string, window?: [number, number], topN = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const node of profile.nodes) for (const c of node.children ?? []) byId.get(c)!.parent = node.id;
  const selfUs = new Map<number, number>();
  const n = profile.samples.length;
  const mean = n > 1 ? (profile.endTime - profile.startTime) / n : 0;
  let t = profile.startTime;
  let kept = 0;
  for (let i = 0; i < n; i++) {
    t += profile.timeDeltas[i]!;
    if (window && (t < window[0] || t > window[1])) continue;
    kept++;
    // A sample's time is the gap to the next sample; the last one gets the mean gap.
    const dt = i + 1 < n ? profile.timeDeltas[i + 1]! : mean;
    selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + Math.max(0, dt));
  }
  const entries = new Map<string, ProfileEntry>();
  const owners = new Map<string, number>();
  let busyUs = 0;
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    totalUs += us;
    const { owner, location } = ownerOf(node.callFrame, root);
    if (owner === 'idle') continue;
    busyUs += us;
    owners.set(owner, (owners.get(owner) ?? 0) + us);
    const fn = node.callFrame.functionName || '(anonymous)';
    const key = `${fn}\u0000${location}`;
    const e = entries.get(key) ?? { function: fn, location, owner, selfMs: 0, selfPct: 0 };
    e.selfMs += us / 1000;
    entries.set(key, e);
  }
  // Inclusive time of portcullis' functions: each sample counts once for every distinct function on its stack.
  const inclusive = new Map<string, ProfileEntry>();
  for (const [id, us] of selfUs) {
    if (byId.get(id)?.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (let node = byId.get(id); node; node = node.parent === undefined ? undefined : byId.get(node.parent)) {
      const { owner, location } = ownerOf(node.callFrame, root);
      if (owner !== 'portcullis') continue;
      const fn = node.callFrame.functionName || '(anonymous)';
      const key = `${fn}\u0000${location}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const e = inclusive.get(key) ?? { function: fn, location, owner, selfMs: 0, selfPct: 0 };
      e.selfMs += us / 1000;
      inclusive.set(key, e);
    }
  }
  const pct = (us: number) => (busyUs > 0 ? (100 * us) / busyUs : 0);
  const top = [...entries.values()]
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, topN)
    .map((e) => ({ ...e, selfPct: pct(e.selfMs * 1000) }));
  const byOwner = [...owners.entries()].sort((a, b) => b[1] - a[1]).map(([owner, us]) => ({ owner, selfMs: us / 1000, selfPct: pct(us) }));
  const inclusiveTop = [...inclusive.values()]
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, 20)
    .map((e) => ({ ...e, selfPct: pct(e.selfMs * 1000) }));
  return { totalMs: totalUs / 1000, busyPct: totalUs > 0 ? (100 * busyUs) / totalUs : 0, samples: kept, top, inclusive: inclusiveTop, byOwner };
}

/** The one .cpuprofile a process wrote into `dir`. */
export function profileIn(dir: string, files: string[]): string | null {
  const f = files.find((x) => x.endsWith('.cpuprofile'));
  return f ? join(dir, f) : null;
}

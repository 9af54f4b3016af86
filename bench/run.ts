/**
 * `npm run bench`: the whole benchmark in one command.
 *
 *   node bench/run.ts [--rounds N] [--connections C] [--only PARTS] [--quick]
 *
 * 0. the first start on an empty DATA_DIR (default profile) and the restart (bench/first-start.ts);
 *    with `--only large-start` alone: the first start on a copy of the seeded large folder and its
 *    catch-up (bench/large-start.ts);
 * 1. HTTP: the server's CPU per request of the service (`lrds serve`, large sandbox) against a
 *    raw node:http server sending the same bytes, alternating, per route; the large streamed
 *    answer; `--workers` on Redis (bench/http.ts);
 * 2. in-process scaling of search, positions at risk and admission (bench/inprocess.ts, in a
 *    child process of its own with --expose-gc);
 * 3. results to bench/results/<date>.json and bench/results/latest.json, and a Markdown table.
 */
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { EVENTS_TARGETS, type EventsResults } from './events.ts';
import { type FirstStartResults, firstStartTable, runFirstStart } from './first-start.ts';
import {
  DATA_DIR,
  type HttpOptions,
  type HttpResults,
  type KeysResult,
  runHttp,
  type WorkersResult,
} from './http.ts';
import { INPROCESS_TARGETS, type InProcessResults } from './inprocess.ts';
import { type LargeStartResults, largeStartTable, runLargeStart } from './large-start.ts';
import { BENCH_DIR, fmt, log, machine, runNode, sig } from './lib.ts';
import { STREAM_TARGETS, type StreamResults } from './stream.ts';

const PARTS = [
  'first-start',
  'routes',
  'stream',
  'workers',
  'keys',
  'inprocess',
  'events',
  'large-start',
] as const;
type Part = (typeof PARTS)[number];
/** What a run without --only runs: every part but large-start (a copy of the large folder and its catch-up). */
const DEFAULT_PARTS = PARTS.filter((p) => p !== 'large-start');

const USAGE = `usage: node bench/run.ts [--rounds N] [--connections C] [--only PARTS] [--quick]

  --rounds N       alternating raw/service rounds per route, median taken (default 3, at least 2)
  --connections C  keep-alive connections (default 32)
  --only PARTS     comma-separated parts among ${PARTS.join(', ')} (http: routes, stream, workers, keys;
                   large-start runs only when named)
  --quick          smoke run: a tenth of the requests, small sizes (no 10M positions)
  --profile P      the sandbox profile the HTTP parts serve: large (default) or default`;

function parse() {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string' },
      quick: { type: 'boolean', default: false },
      profile: { type: 'string', default: 'large' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const num = (v: string | undefined, name: string, def: number, min: number): number => {
    if (v === undefined) return def;
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) {
      process.stderr.write(`--${name} must be a number >= ${min}, got '${v}'\n${USAGE}\n`);
      process.exit(2);
    }
    return n;
  };
  const quick = values.quick;
  const parts = new Set<Part>();
  for (const p of (values.only ?? DEFAULT_PARTS.join(',')).split(',')) {
    if (p === 'http') for (const h of ['routes', 'stream', 'workers', 'keys'] as const) parts.add(h);
    else if ((PARTS as readonly string[]).includes(p)) parts.add(p as Part);
    else {
      process.stderr.write(`--only takes ${PARTS.join(', ')} or http, got '${p}'\n${USAGE}\n`);
      process.exit(2);
    }
  }
  if (values.profile !== 'default' && values.profile !== 'large') {
    process.stderr.write(`--profile takes default or large, got '${values.profile}'\n${USAGE}\n`);
    process.exit(2);
  }
  const http: HttpOptions = {
    profile: values.profile,
    rounds: Math.round(num(values.rounds, 'rounds', 3, 2)),
    connections: Math.round(num(values.connections, 'connections', 32, 1)),
    settleSec: quick ? 2 : 5,
    scale: quick ? 0.1 : 1,
    parts: {
      routes: parts.has('routes'),
      streaming: parts.has('stream'),
      workers: parts.has('workers'),
      keys: parts.has('keys'),
    },
  };
  return { quick, only: values.only ?? 'all', parts, http };
}

async function runInProcessChild(quick: boolean): Promise<InProcessResults> {
  const out = join(DATA_DIR, `inprocess-${process.pid}.tmp`);
  mkdirSync(DATA_DIR, { recursive: true });
  try {
    await runNode(
      ['--expose-gc', join(BENCH_DIR, 'inprocess.ts'), '--json-out', out, ...(quick ? ['--quick'] : [])],
      process.env,
      { stderr: 'inherit' },
    );
    return JSON.parse(readFileSync(out, 'utf8')) as InProcessResults;
  } finally {
    rmSync(out, { force: true });
  }
}

/** Risk events (bench/events.ts) in a child process of their own (the large model's memory stays there). */
async function runEventsChild(quick: boolean): Promise<EventsResults> {
  // Its results go to a scratch directory (the dataset in DATA_DIR is only read by this part).
  const scratch = mkdtempSync(join(tmpdir(), 'lrds-bench-events-'));
  const out = join(scratch, 'events.json');
  try {
    await runNode(
      [
        '--max-old-space-size=6144',
        join(BENCH_DIR, 'events.ts'),
        '--json-out',
        out,
        ...(quick ? ['--quick'] : []),
      ],
      process.env,
      { stderr: 'inherit' },
    );
    return JSON.parse(readFileSync(out, 'utf8')) as EventsResults;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function eventsTables(ev: EventsResults): string {
  const l = ev.latency;
  const n = (x: number) => x.toLocaleString('en-US');
  const lines = [
    `Price move to webhook arrival (${n(l.subscriptions)} webhooks by wallet, ${n(l.positions)} positions, SQLite outbox, one local receiver): ` +
      `p50 ${fmt(l.p50Ms)} ms, p99 ${fmt(l.p99Ms)} ms, max ${fmt(l.maxMs)} ms over ${l.deliveries} deliveries.`,
    '',
    '| profile | positions | subscriptions | tick | thresholds | held | matching CPU ms/tick, mean | matching wall, median | p99 | events built CPU ms/tick | read model CPU ms/tick | events/tick | deliveries/tick |',
    '|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...ev.matching.rows.map(
      (r) =>
        `| ${r.profile} | ${n(r.positions)} | ${n(r.subscriptions)} | ${r.tick} (${n(r.tokensMoved)}) | ${r.thresholds} | ${n(r.held)} | ${fmt(r.cpuMeanMs)} | ${fmt(r.medianMs)} | ${fmt(r.p99Ms)} | ${fmt(r.eventsCpuMeanMs)} | ${fmt(r.readModelCpuMeanMs)} | ${fmt(r.eventsPerTick)} | ${fmt(r.deliveriesPerTick)} |`,
    ),
  ];
  const b = ev.matching.baseline;
  if (b)
    lines.push(
      '',
      `Baseline (same run): each of ${n(b.subscriptions)} subscriptions tested against each of the ${n(b.positions)} positions below 1.515: ${fmt(b.ms)} ms, ${fmt(b.ratioToIndexed)}x the indexed pass.`,
    );
  return lines.join('\n');
}

const passMark = (pass: boolean) => (pass ? 'yes' : '**no**');

function httpTable(h: HttpResults): string {
  const lines = [
    '| route | body | raw CPU µs/req | service CPU µs/req | ratio | service server-side p50 / p99 ms | raw / service req/s | target | pass |',
    '|---|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const r of h.routes) {
    const kb = r.bodyBytes >= 10_240 ? `${fmt(r.bodyBytes / 1024)} KB` : `${r.bodyBytes} B`;
    lines.push(
      `| \`GET ${r.shown.replace('/api/v1', '')}\` | ${kb} | ${fmt(r.median.raw.cpuUsPerRequest)} | ${fmt(r.median.service.cpuUsPerRequest)} | ` +
        `${r.ratio.toFixed(2)} | ${fmt(r.median.service.serverP50Ms)} / ${fmt(r.median.service.serverP99Ms)} | ` +
        `${fmt(r.median.raw.reqPerSec)} / ${fmt(r.median.service.reqPerSec)} | ${r.target} | ${passMark(r.pass)} |`,
    );
  }
  return lines.join('\n');
}

function workersTable(w: WorkersResult): string {
  const lines = [
    '| market detail | CPU µs/req (all processes) | req/s | server-side p50 / p99 ms |',
    '|---|---:|---:|---:|',
  ];
  for (const r of w.runs)
    lines.push(
      `| ${r.workers} worker${r.workers > 1 ? 's' : ''}, ${r.redis ? 'Redis' : 'no Redis'} | ${fmt(r.run.cpuUsPerRequest)} | ${fmt(r.run.reqPerSec)} | ${fmt(r.run.serverP50Ms)} / ${fmt(r.run.serverP99Ms)} |`,
    );
  lines.push(
    '',
    `Two workers on Redis answer ${fmt(w.throughputGain)}x the requests a second of one; Redis adds ${fmt(w.redisAddedCpuUs)} µs of CPU per request to one worker.`,
  );
  return lines.join('\n');
}

function keysTable(k: KeysResult): string {
  const lines = [
    '| keys in the store | raw CPU µs/req | service CPU µs/req | ratio | server-side p50 / p99 ms | spawn → healthy s | RSS when settled MiB |',
    '|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of k.runs)
    lines.push(
      `| ${r.keys.toLocaleString('en-US')} | ${fmt(r.raw.cpuUsPerRequest)} | ${fmt(r.service.cpuUsPerRequest)} | ${r.ratio.toFixed(2)} | ${fmt(r.service.serverP50Ms)} / ${fmt(r.service.serverP99Ms)} | ${fmt(r.msToHealthy / 1000)} | ${fmt(r.rssMiB)} |`,
    );
  return lines.join('\n');
}

function streamingTable(st: StreamResults): string {
  const lines = [
    `| \`GET /liquidations?limit=${st.limit.toLocaleString('en-US')}\` | rows | MB | first byte ms (target ≤ ${STREAM_TARGETS.firstByteMs}) | whole answer s | server RSS growth MiB (target < ${STREAM_TARGETS.rssGrowthMiB}) |`,
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const [i, r] of st.runs.entries()) {
    lines.push(
      `| ${r.format === 'ndjson' ? 'NDJSON' : 'JSON'}${i === 0 ? ' (first large answer)' : ''} | ${r.rows >= 0 ? r.rows.toLocaleString('en-US') : '–'} | ${fmt(r.bytes / 1e6)} | ${fmt(r.firstByteMs)} | ${fmt(r.totalMs / 1000)} | ${fmt(r.rssGrowthMiB)} |`,
    );
  }
  const s = st.slowClient;
  lines.push(
    '',
    st.settleTimedOut
      ? `Measured on a busy server: it had not settled after ${fmt(st.settleMs / 1000)} s; the RSS growth includes its own jobs'.`
      : `Measured once the server had settled (its start-up jobs done; ${fmt(st.settleMs / 1000)} s after the routes above).`,
    '',
    `A client that stops reading after ${fmt(s.pausedAfterBytes / 1e6)} MB for ${s.pauseMs / 1000} s: the server's RSS ` +
      `moved ${fmt(s.rssGrowthDuringPauseMiB)} MiB and it used ${fmt(s.serverCpuMsDuringPause)} ms of CPU during the pause ` +
      `(${fmt(s.serverCpuMsIdle)} ms over 3 s without any request); the answer then completed (${s.rows.toLocaleString('en-US')} rows).`,
  );
  return lines.join('\n');
}

function inprocessTables(ip: InProcessResults): string {
  const out: string[] = [];
  const qs = ip.search.queries;
  out.push(
    `| search (limit 50), median / p99 µs | ${qs.map((q) => `\`${q.query}\``).join(' | ')} |`,
    `|---|${qs.map(() => '---:').join('|')}|`,
  );
  for (const s of ip.search.sizes) {
    out.push(
      `| ${s.markets.toLocaleString('en-US')} markets | ${qs
        .map((q) => `${fmt(s.results[q.name]!.medianUs)} / ${fmt(s.results[q.name]!.p99Us)}`)
        .join(' | ')} |`,
    );
  }
  out.push(
    `| growth 10k → 100k (target ≤ ${INPROCESS_TARGETS.searchGrowth10kTo100k}x) | ${qs
      .map((q) => {
        const g = ip.search.growth10kTo100k[q.name]!;
        return `${g.ratio}x ${g.pass ? '' : '**fail**'}`.trim();
      })
      .join(' | ')} |`,
    '',
  );
  const names = [...new Set(ip.risk.sizes.flatMap((s) => Object.keys(s.results)))];
  out.push(
    `| positions at risk (hf < 1.1, limit 50), median / p99 µs | ${names.join(' | ')} | bytes/position (index) | heap Δ/position |`,
    `|---|${names.map(() => '---:').join('|')}|---:|---:|`,
  );
  for (const s of ip.risk.sizes) {
    out.push(
      `| ${s.positions.toLocaleString('en-US')} positions | ${names
        .map((n) => (s.results[n] ? `${fmt(s.results[n]!.medianUs)} / ${fmt(s.results[n]!.p99Us)}` : '–'))
        .join(' | ')} | ${s.byteSizePerPosition} | ${s.heapDeltaPerPosition} |`,
    );
  }
  const g = ip.risk.growth;
  if (g) {
    out.push(
      `| growth ${fmt(g.from)} → ${fmt(g.to)} (target ≤ ${g.target}x) | ${names
        .map((n) =>
          g.ratios[n] ? `${g.ratios[n]!.ratio}x ${g.ratios[n]!.pass ? '' : '**fail**'}`.trim() : '',
        )
        .join(' | ')} | | |`,
    );
  }
  out.push('');
  const pg = ip.risk.paging;
  if (pg) {
    out.push(
      `| paging every position at risk (${fmt(pg.atRisk)} of ${fmt(pg.positions)}, hf < 1.1), cursor | pages | first page µs | later pages median / p99 µs | second page median / p99 µs | deep page median / p99 µs | whole walk ms |`,
      '|---|---:|---:|---:|---:|---:|---:|',
    );
    for (const l of pg.limits) {
      out.push(
        `| limit ${fmt(l.limit)} | ${fmt(l.pages)} | ${fmt(l.firstPageUs)} | ${fmt(l.pageMedianUs)} / ${fmt(l.pageP99Us)} | ` +
          `${fmt(l.secondPage.medianUs)} / ${fmt(l.secondPage.p99Us)} | ` +
          `${fmt(l.deepPage.medianUs)} / ${fmt(l.deepPage.p99Us)} (offset ${fmt(l.deepPage.offset)}) | ${fmt(l.walkMs)} |`,
      );
    }
    out.push('');
  }
  const a = ip.admission;
  out.push(
    '| admission (limit + quotas + durable count) | backend | µs/request c=1 | µs/request c=32 | median / p99 µs c=1 | median / p99 µs c=32 | target | pass |',
    '|---|---|---:|---:|---:|---:|---|---|',
  );
  const row = (label: string, f: InProcessResults['admission']['memory'], target: string, pass: boolean) =>
    `| ${label} | ${f.backend} | ${fmt(f.concurrency1.usPerRequest)} | ${fmt(f.concurrency32.usPerRequest)} | ` +
    `${fmt(f.concurrency1.medianUs)} / ${fmt(f.concurrency1.p99Us)} | ${fmt(f.concurrency32.medianUs)} / ${fmt(f.concurrency32.p99Us)} | ${target} | ${passMark(pass)} |`;
  out.push(row('in process', a.memory, `≤ ${a.memory.target} µs/request`, a.memory.pass));
  if ('skipped' in a.redis) out.push(`| Redis | skipped: ${a.redis.skipped} | | | | | | |`);
  else
    out.push(
      row(
        `Redis (+${a.redis.addedMedianMs} ms median)`,
        a.redis,
        `≤ +${a.redis.target} ms median`,
        a.redis.pass,
      ),
    );
  return out.join('\n');
}

async function main(): Promise<void> {
  const opts = parse();
  const started = new Date();
  const info = machine();
  log(
    `${info.cpuCount} x ${info.cpuModel}, ${info.totalMemoryGiB} GiB, Node ${info.node}, load ${info.loadAverageAtStart.join(' ')}` +
      (opts.quick ? ' (quick smoke run: figures are indicative only)' : ''),
  );

  let http: HttpResults | null = null;
  let inprocess: InProcessResults | null = null;
  let events: EventsResults | null = null;
  let firstStart: FirstStartResults | null = null;
  if (opts.parts.has('first-start')) {
    log('first start and restart (default profile, empty DATA_DIR)');
    firstStart = await runFirstStart({
      observeSec: opts.quick ? 30 : 150,
      settleMaxSec: opts.quick ? 60 : 600,
    });
  }
  let largeStart: LargeStartResults | null = null;
  // Before the HTTP parts: they serve bench/.data, after which a start on it is a restart.
  if (opts.parts.has('large-start')) {
    log('first start on the large profile (a copy of bench/.data) and its catch-up');
    largeStart = await runLargeStart({
      data: DATA_DIR,
      seed: false,
      quick: opts.quick,
      settleMaxSec: 900,
    });
  }
  if (['routes', 'stream', 'workers', 'keys'].some((p) => opts.parts.has(p as Part)))
    http = await runHttp(opts.http);
  if (opts.parts.has('inprocess')) {
    log('in-process scaling (child process with --expose-gc)');
    inprocess = await runInProcessChild(opts.quick);
  }
  if (opts.parts.has('events')) {
    log('risk events: matching per tick and price move to webhook arrival (child process)');
    events = await runEventsChild(opts.quick);
  }

  const failures = (http?.routes ?? []).filter((r) => r.failures > 0);
  const targets: { name: string; target: string; value: number | string; pass: boolean }[] = [];
  for (const r of http?.routes ?? []) {
    targets.push({
      name: `http ${r.name}: raw CPU/request ÷ service CPU/request; server p99 ms`,
      target: r.target,
      value: `${r.ratio}; ${r.median.service.serverP99Ms}`,
      pass: r.pass,
    });
  }
  if (firstStart) {
    const t = firstStart.targets;
    targets.push(
      {
        name: 'first start (default profile, empty DATA_DIR): spawn to healthy, ms',
        target: `<= ${t.firstHealthyMs}`,
        value: firstStart.first.msToHealthy,
        pass: firstStart.first.msToHealthy <= t.firstHealthyMs,
      },
      {
        name: 'restart: spawn to healthy, ms',
        target: `<= ${t.restartHealthyMs}`,
        value: firstStart.restart.msToHealthy,
        pass: firstStart.restart.msToHealthy <= t.restartHealthyMs,
      },
      {
        name: 'first start: folder once settled, MB',
        target: `< ${t.folderMB}`,
        value: firstStart.settled.folderMB,
        pass: firstStart.settled.folderMB < t.folderMB,
      },
    );
  }
  const st = http?.streaming;
  if (st) {
    const worst = (f: (r: StreamResults['runs'][number]) => number) => Math.max(...st.runs.map(f));
    targets.push(
      {
        name: 'liquidations 500k: first byte ms (worst answer)',
        target: `<= ${STREAM_TARGETS.firstByteMs}`,
        value: worst((r) => r.firstByteMs),
        pass: worst((r) => r.firstByteMs) <= STREAM_TARGETS.firstByteMs,
      },
      {
        name: 'liquidations 500k: server RSS growth MiB (worst answer, the first included; server settled)',
        target: `< ${STREAM_TARGETS.rssGrowthMiB}`,
        value: worst((r) => r.rssGrowthMiB),
        pass: worst((r) => r.rssGrowthMiB) < STREAM_TARGETS.rssGrowthMiB,
      },
    );
  }
  if (inprocess) {
    for (const [q, g] of Object.entries(inprocess.search.growth10kTo100k)) {
      targets.push({
        name: `search growth 10k->100k (${q})`,
        target: `<= ${g.target}x`,
        value: g.ratio,
        pass: g.pass,
      });
    }
    const g = inprocess.risk.growth;
    if (g) {
      for (const [q, r] of Object.entries(g.ratios)) {
        targets.push({
          name: `positions-at-risk growth ${g.from}->${g.to} (${q})`,
          target: `<= ${g.target}x`,
          value: r.ratio,
          pass: r.pass,
        });
      }
    }
    const million = inprocess.risk.sizes.find((s) => s.positions === 1_000_000)?.results.stress3Assets;
    if (million && inprocess.risk.stress) {
      const worstMs = sig(Math.max(million.p99Us, inprocess.risk.stress.firstUs) / 1000, 3);
      targets.push({
        name: `stress test, 3 assets over ${inprocess.risk.stress.markets} moved markets at 1M positions: ms, worst of first call and p99`,
        target: `<= ${INPROCESS_TARGETS.stress3AssetsMs}`,
        value: worstMs,
        pass: worstMs <= INPROCESS_TARGETS.stress3AssetsMs,
      });
    }
    const m = inprocess.admission.memory;
    for (const c of [1, 32] as const) {
      const f = c === 1 ? m.concurrency1 : m.concurrency32;
      targets.push({
        name: `admit in process, us/request at concurrency ${c}`,
        target: `<= ${m.target}`,
        value: f.usPerRequest,
        pass: f.usPerRequest <= m.target,
      });
    }
    const rd = inprocess.admission.redis;
    if (!('skipped' in rd)) {
      targets.push({
        name: 'admit Redis, added median ms vs in process',
        target: `<= ${rd.target}`,
        value: rd.addedMedianMs,
        pass: rd.pass,
      });
    }
  }

  if (events) {
    targets.push({
      name: 'events: price move to webhook arrival at 10,000 subscriptions, p99 ms',
      target: `< ${EVENTS_TARGETS.deliveryP99Ms}`,
      value: events.latency.p99Ms,
      pass: events.latency.p99Ms < EVENTS_TARGETS.deliveryP99Ms,
    });
    for (const at100k of events.matching.rows.filter((r) => r.subscriptions === 100_000))
      targets.push({
        name: `events: matching CPU ms per tick at 100,000 subscriptions, ${at100k.tick} (${at100k.profile} profile, mean)`,
        target: `< ${EVENTS_TARGETS.matchMsAt100k}`,
        value: at100k.cpuMeanMs,
        pass: at100k.cpuMeanMs < EVENTS_TARGETS.matchMsAt100k,
      });
  }
  const day = started.toISOString().slice(0, 10);
  const results = {
    date: started.toISOString(),
    machine: info,
    settings: {
      quick: opts.quick,
      only: opts.only,
      rounds: opts.http.rounds,
      connections: opts.http.connections,
      requestScale: opts.http.scale,
      settleSec: opts.http.settleSec,
      profile: opts.http.profile,
    },
    firstStart,
    largeStart,
    http,
    inprocess,
    events,
    targets,
    allPass: targets.every((t) => t.pass) && failures.length === 0,
  };
  const dir = join(BENCH_DIR, 'results');
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(results, null, 2)}\n`;
  for (const name of [`${day}.json`, 'latest.json']) {
    const tmp = join(dir, `${name}.tmp`);
    writeFileSync(tmp, json);
    renameSync(tmp, join(dir, name));
  }

  const md: string[] = [];
  md.push(
    `### Benchmarks (${day}${opts.quick ? ', quick smoke run' : ''})`,
    '',
    `${info.cpuCount} × ${info.cpuModel}, ${info.totalMemoryGiB} GiB RAM, Linux ${info.kernel}, Node ${info.node}.`,
  );
  if (firstStart) md.push('', firstStartTable(firstStart));
  if (largeStart) md.push('', largeStartTable(largeStart));
  if (http) {
    md.push(
      `Sandbox (${http.dataset.profile} profile): ${http.dataset.markets.toLocaleString('en-US')} markets, ${http.dataset.positions.toLocaleString('en-US')} positions, ` +
        `the simulation ticking. ${http.loadGenerator}; raw and service alternating, median of ${opts.http.rounds} rounds. ` +
        'Ratio: raw CPU per request ÷ service CPU per request. Server-side latency: meta.latencyMs of each answer. ' +
        'Requests a second are secondary: the client shares the cores and sets the pace.',
      '',
      `Start-up (spawn to healthy, ${http.dataset.profile} dataset): ${fmt(http.startup.msToHealthy / 1000)} s; RSS when healthy ` +
        `${fmt(http.startup.rssMiBWhenHealthy)} MiB (${fmt(http.startup.rssMiBSettled)} MiB once settled), ` +
        `peak during the run ${fmt(http.startup.peakRssMiB)} MiB.`,
    );
    if (http.routes.length > 0) md.push('', httpTable(http));
    if (http.streaming) md.push('', streamingTable(http.streaming));
    if (http.workers) md.push('', workersTable(http.workers));
    if (http.keys) md.push('', keysTable(http.keys));
  }
  if (inprocess) md.push('', inprocessTables(inprocess));
  if (events) md.push('', eventsTables(events));
  process.stdout.write(`\n${md.join('\n')}\n\n`);
  log(`results written to bench/results/${day}.json and bench/results/latest.json`);

  if (failures.length > 0) {
    process.stderr.write(
      `\nBENCH FAILED: errors or non-2xx responses on ${failures.map((f) => `${f.name} (${f.failures})`).join(', ')}\n`,
    );
    process.exit(1);
  }
  const missed = targets.filter((t) => !t.pass);
  if (missed.length > 0)
    log(`targets missed: ${missed.map((t) => `${t.name} = ${t.value} (${t.target})`).join('; ')}`);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `\nBENCH FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});

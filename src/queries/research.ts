import type { ReadModel } from '../data/read-model.ts';
import { digestData } from '../data/research-job.ts';
import type { ResearchReportRow } from '../domain/records/history.ts';
import { dataDescription, type ResearchReport, reportForChains } from '../domain/research.ts';
import type { HistoryStore } from '../store/ports/history.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { QueryError } from './errors.ts';
import type { Found, Scope } from './types.ts';

/**
 * Research: the daily digests the research job wrote (src/data/research-job.ts), read from the
 * store, each narrowed to the chains in the caller's scope (a report whose chains are all out
 * of scope is left out of lists and is not found by id).
 */

/** What the research queries read. */
export type ResearchReader = Pick<HistoryStore, 'researchReports' | 'researchReport'>;

export interface ReportSummary {
  id: string;
  date: string;
  protocol: string;
  title: string;
  highlights: string[];
  /** The chains it has a section for (in scope). */
  chainIds: number[];
  generatedAt: string;
  /**
   * Whether it lists positions at risk and stale oracles of market data (written right after
   * its day); never for sandbox data.
   */
  live: boolean;
  /** The data it rests on: `sandbox` (simulated) or `market`, in a sentence. */
  data: { kind: 'sandbox' | 'market'; description: string };
}

/** Rows read per store query while filling a page (reports out of scope are skipped). */
const READ_PAGE = 200;
/** Most stored reports one request reads (two years of one protocol, or about four months of all six). */
export const SCAN_LIMIT = 1_000;

function parsed(
  model: ReadModel,
  row: ResearchReportRow,
  chains: readonly number[] | undefined,
): ResearchReport | null {
  const report = reportForChains(JSON.parse(row.body) as ResearchReport, chains);
  // Reports written before they stated their data rest on the model's (served only when the
  // model is the store's dataset).
  report.data ??= dataDescription(digestData(model));
  return report.chains.length > 0 || chains === undefined ? report : null;
}

export interface ListReportsParams extends Scope {
  fromMs: number;
  toMs: number;
  cursor?: string | undefined;
  limit: number;
}

/**
 * Reports of days in [fromMs, toMs) in scope, newest day first then id descending; paged by
 * cursor. A request reads at most SCAN_LIMIT stored reports: when most are out of the caller's
 * chains, a page may hold fewer than `limit` reports, and `nextCursor` goes on from the last
 * one read (the work of a request never grows with the reports stored).
 */
export async function listReports(
  model: ReadModel,
  reader: ResearchReader,
  p: ListReportsParams,
): Promise<Found<ReportSummary>> {
  const after = decodeCursor(p.cursor, 'research', ['number', 'string']);
  const items: ReportSummary[] = [];
  /** The last report read (kept or skipped): where the next page starts. */
  let read = after ? { day: after[0], id: after[1] } : undefined;
  let more = false;
  if (model.stored && p.fromMs < p.toMs) {
    for (let scanned = 0; !more; ) {
      if (scanned >= SCAN_LIMIT) {
        more = true;
        break;
      }
      const rows = await reader.researchReports(
        { protocol: p.protocol, fromMs: Math.floor(p.fromMs), toMs: Math.ceil(p.toMs) },
        READ_PAGE,
        read,
      );
      for (const row of rows) {
        const r = parsed(model, row, p.chainIds);
        if (r) {
          if (items.length === p.limit) {
            more = true;
            break;
          }
          items.push({
            id: r.id,
            date: r.date,
            protocol: r.protocol,
            title: r.title,
            highlights: r.highlights,
            chainIds: r.chains.map((c) => c.chainId),
            generatedAt: r.generatedAt,
            live: r.liveAsOf !== null && r.data?.kind !== 'sandbox',
            data: r.data ?? dataDescription(digestData(model)),
          });
        }
        read = { day: row.day, id: row.id };
      }
      scanned += rows.length;
      if (rows.length < READ_PAGE) break;
    }
  }
  return {
    items,
    itemProtocols: items.map((r) => r.protocol),
    scopeProtocols: model.catalog.protocolsIn(p),
    ...(more && read ? { nextCursor: encodeCursor('research', [read.day, read.id]) } : {}),
  };
}

/**
 * One report by id, narrowed to the chains in scope; REPORT_NOT_FOUND when none, when none of
 * its chains is in scope, or when its day starts before the caller's history window.
 */
export async function getReport(
  model: ReadModel,
  reader: ResearchReader,
  id: string,
  chains: readonly number[] | undefined,
  windowStartMs: number | undefined,
): Promise<Found<ResearchReport>> {
  const row = model.stored && id.length <= 64 ? await reader.researchReport(id) : null;
  // A report of a day before the caller's history window is not theirs to read, as in lists.
  const inWindow = row !== null && (windowStartMs === undefined || row.day >= windowStartMs);
  const report = inWindow && parsed(model, row, chains);
  if (!report) throw QueryError.reportNotFound(id);
  return { items: [report], itemProtocols: [report.protocol], scopeProtocols: [report.protocol] };
}

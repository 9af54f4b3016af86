import { Counter, Gauge, Histogram, register } from 'prom-client';
import type { JobMetrics } from './runner.ts';

/**
 * The job runner's Prometheus series, on prom-client's default registry (served with the rest on
 * METRICS_PORT):
 * - lrds_job_run_seconds{job}: time of each run, from start to end;
 * - lrds_job_lag_seconds{job}: how late the last run started after it was due (a loop held by
 *   other work, or a run that outlasted its interval);
 * - lrds_job_runs_total{job, outcome}: runs, by outcome ('ok' or 'failed').
 */
export function jobMetrics(): JobMetrics {
  const existing = register.getSingleMetric('lrds_job_run_seconds');
  const seconds =
    (existing as Histogram<'job'> | undefined) ??
    new Histogram({
      name: 'lrds_job_run_seconds',
      help: 'Time of each run of a background job.',
      labelNames: ['job'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300],
    });
  const lag =
    (register.getSingleMetric('lrds_job_lag_seconds') as Gauge<'job'> | undefined) ??
    new Gauge({
      name: 'lrds_job_lag_seconds',
      help: 'How late the last run of a background job started after it was due.',
      labelNames: ['job'],
      aggregator: 'max',
    });
  const runs =
    (register.getSingleMetric('lrds_job_runs_total') as Counter<'job' | 'outcome'> | undefined) ??
    new Counter({
      name: 'lrds_job_runs_total',
      help: 'Runs of a background job, by outcome (ok, failed).',
      labelNames: ['job', 'outcome'],
    });
  return {
    ran(job, runSeconds, lagSeconds, failed) {
      seconds.observe({ job }, runSeconds);
      lag.set({ job }, lagSeconds);
      runs.inc({ job, outcome: failed ? 'failed' : 'ok' });
    },
  };
}

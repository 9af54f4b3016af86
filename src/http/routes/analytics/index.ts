import type { Area } from '../types.ts';
import { registerAnalyticsOverview } from './overview.ts';
import { OverviewSchema, TimeseriesPointSchema } from './schemas.ts';
import { registerAnalyticsTimeseries } from './timeseries.ts';

/** Analytics: totals now and per day (category analytics). */
export const analytics: Area = {
  scope: 'data',
  tag: {
    name: 'Analytics',
    description: 'Totals now and per day over the stored history (analytics category).',
  },
  schemas: { Overview: OverviewSchema, TimeseriesPoint: TimeseriesPointSchema },
  register(app, deps) {
    registerAnalyticsOverview(app, deps);
    registerAnalyticsTimeseries(app, deps);
  },
};

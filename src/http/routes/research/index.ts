import type { Area } from '../types.ts';
import { registerResearchReport } from './detail.ts';
import { registerResearchReports } from './list.ts';
import { ResearchReportSchema, ResearchReportSummarySchema } from './schemas.ts';

/** Research: the daily risk digests (category research). */
export const research: Area = {
  scope: 'data',
  tag: {
    name: 'Research',
    description: 'Daily risk digests written from the data by a scheduled job (research category).',
  },
  schemas: { ResearchReportSummary: ResearchReportSummarySchema, ResearchReport: ResearchReportSchema },
  register(app, deps) {
    registerResearchReports(app, deps);
    registerResearchReport(app, deps);
  },
};

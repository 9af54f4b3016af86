import { risk } from '../risk/index.ts';
import type { Area } from '../types.ts';
import { registerEventStream } from './stream.ts';

/** Risk events as server-sent events (category risk; listed with the risk routes). */
export const events: Area = {
  scope: 'data',
  tag: risk.tag,
  register(app, deps) {
    registerEventStream(app, deps);
  },
};

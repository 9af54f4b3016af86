import type { WriteProblem, WriteProblemListener } from '../write-health.ts';

/** What a probe of the store needs. */
export interface StoreHealth {
  readonly kind: 'sqlite' | 'postgres';
  /** Health probe: true when the backend answers (a short timeout, never throws). */
  ping?(): Promise<boolean>;
  /** Writes failing now (a full disk): since when and the backend's error; null while they work. */
  writeProblem?(): WriteProblem | null;
  /** Hears when writes start failing and when they work again. Returns the way to stop hearing. */
  watchWrites?(listener: WriteProblemListener): () => void;
}

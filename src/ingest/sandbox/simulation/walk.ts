/**
 * A cumulative sum of hourly increments (a log-price random walk) that can be read at any hour
 * after its origin and grows forward on demand. The increments are pure functions of the hour,
 * so the sum up to an hour never depends on which hours were read before; sums are always
 * accumulated in the same order (from a checkpoint, hour by hour), so they are bit-identical
 * however they are reached.
 */
export class Walk {
  readonly #inc: (hour: number) => number;
  readonly #origin: number;
  readonly #stride: number;
  /** cp[i] = sum of increments from the origin to origin + i * stride (exclusive). */
  #cp: Float64Array;
  #known = 1;
  #lastHour = Number.NaN;
  #lastValue = 0;

  /**
   * @param inc increment from hour h to hour h + 1 (hours since the epoch)
   * @param originHour the walk is 0 there; it is undefined before
   * @param stride hours between stored checkpoints: 1 stores every hour (shared drivers read
   *   often), 24 stores one value a day (per-asset walks, 24 times less memory, at most 23
   *   increments recomputed per read)
   */
  constructor(inc: (hour: number) => number, originHour: number, stride: number) {
    this.#inc = inc;
    this.#origin = originHour;
    this.#stride = stride;
    this.#cp = new Float64Array(stride === 1 ? 9000 : 400);
  }

  get originHour(): number {
    return this.#origin;
  }

  increment(hour: number): number {
    return this.#inc(hour);
  }

  #ensure(index: number): void {
    if (index < this.#known) return;
    if (index >= this.#cp.length) {
      const grown = new Float64Array(Math.max(index + 1, this.#cp.length * 2));
      grown.set(this.#cp.subarray(0, this.#known));
      this.#cp = grown;
    }
    const cp = this.#cp;
    for (let i = this.#known; i <= index; i++) {
      let v = cp[i - 1] as number;
      const from = this.#origin + (i - 1) * this.#stride;
      for (let h = from; h < from + this.#stride; h++) v += this.#inc(h);
      cp[i] = v;
    }
    this.#known = index + 1;
  }

  /** Value at whole hour `hour` (>= the origin). */
  at(hour: number): number {
    if (hour === this.#lastHour) return this.#lastValue;
    const offset = hour - this.#origin;
    if (offset < 0) throw new RangeError(`hour ${hour} is before the walk's origin ${this.#origin}`);
    const i = Math.floor(offset / this.#stride);
    this.#ensure(i);
    let v = this.#cp[i] as number;
    for (let h = this.#origin + i * this.#stride; h < hour; h++) v += this.#inc(h);
    this.#lastHour = hour;
    this.#lastValue = v;
    return v;
  }

  /** Values at hours fromHour .. fromHour + out.length - 1, into `out`, times `coef`, added when `add`. */
  fill(fromHour: number, out: Float64Array, coef: number, add: boolean): void {
    if (out.length === 0) return;
    const offset = fromHour - this.#origin;
    if (offset < 0) throw new RangeError(`hour ${fromHour} is before the walk's origin ${this.#origin}`);
    const last = fromHour + out.length - 1;
    this.#ensure(Math.floor((last - this.#origin) / this.#stride));
    const cp = this.#cp;
    let i = Math.floor(offset / this.#stride);
    let h = this.#origin + i * this.#stride;
    let v = cp[i] as number;
    while (h < fromHour) v += this.#inc(h++);
    for (let k = 0; k < out.length; k++, h++) {
      if ((h - this.#origin) % this.#stride === 0) {
        i = (h - this.#origin) / this.#stride;
        v = cp[i] as number;
      }
      out[k] = add ? (out[k] as number) + coef * v : coef * v;
      if (k + 1 < out.length) v += this.#inc(h);
    }
  }
}

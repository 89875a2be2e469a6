// Loaded with --import into a gateway process to give it a wrong wall clock: Date reads SKEW_MS ahead
// (negative: behind). Timers and the monotonic clock are untouched, as on a host whose clock was set wrong.
const skew = Number(process.env.SKEW_MS || 0);
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);
class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(realNow() + skew);
    else super(...args);
  }
  static now() {
    return realNow() + skew;
  }
}
globalThis.Date = SkewedDate;

// A small time-series chart on a canvas: a few lines with a soft fill, a
// grid with round-number ticks, crisp on high-density screens. No
// dependencies.

/**
 * niceStep returns a round step near range/ticks: 1, 2 or 5 times a power
 * of ten, or with base 1024 (bytes) a power of two times a power of 1024.
 */
function niceStep(range, ticks, base) {
  const raw = range / ticks;
  if (base === 1024) {
    const unit = 1024 ** Math.max(0, Math.floor(Math.log(raw) / Math.log(1024)));
    return unit * 2 ** Math.ceil(Math.log2(raw / unit));
  }
  const pow = 10 ** Math.floor(Math.log10(raw));
  const f = raw / pow;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * pow;
}

export class LineChart {
  /**
   * canvas: the element; series: [{label, color}]; options: {window (the
   * most ms shown; a young series shows at least 30 s), format (tick
   * labels), min (lowest top of the scale), base (1024 for bytes)}.
   */
  constructor(canvas, series, { window = 120_000, format = String, min = 1, base = 10 } = {}) {
    this.canvas = canvas;
    this.series = series.map((s) => ({ ...s, points: [] }));
    this.window = window;
    this.format = format;
    this.min = min;
    this.base = base;
    new ResizeObserver(() => this.draw()).observe(canvas);
  }

  /** add appends one sample per series at time t (ms) and redraws. */
  add(t, ...values) {
    this.series.forEach((s, i) => {
      s.points.push([t, values[i]]);
      while (s.points.length > 2 && s.points[1][0] < t - this.window) s.points.shift();
    });
    this.draw();
  }

  draw() {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth;
    const h = c.clientHeight;
    if (!w || !h) return;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
    }
    const g = c.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);

    const all = this.series.flatMap((s) => s.points);
    const now = all.length ? Math.max(...all.map((p) => p[0])) : Date.now();
    const oldest = all.length ? Math.min(...all.map((p) => p[0])) : now;
    // A young series fills the width instead of hugging the right edge.
    const span = Math.min(this.window, Math.max(30_000, Math.ceil((now - oldest) / 10_000) * 10_000));
    const t0 = now - span;
    const top = Math.max(this.min, ...all.map((p) => p[1]));
    const step = niceStep(top, 4, this.base);
    const max = Math.ceil(top / step) * step;
    const ticks = [];
    for (let v = 0; v <= max + step / 2; v += step) ticks.push(v);

    g.font = "12px system-ui, sans-serif";
    const labelWidth = Math.max(...ticks.map((v) => g.measureText(this.format(v)).width));
    const pad = { l: Math.ceil(labelWidth) + 14, r: 12, t: 10, b: 22 };
    const x = (t) => pad.l + ((t - t0) / span) * (w - pad.l - pad.r);
    const y = (v) => h - pad.b - (v / max) * (h - pad.t - pad.b);

    // Grid and value ticks.
    g.textBaseline = "middle";
    g.textAlign = "right";
    for (const v of ticks) {
      g.strokeStyle = v === 0 ? "#334155" : "#1f2b45";
      g.lineWidth = 1;
      g.beginPath();
      g.moveTo(pad.l, Math.round(y(v)) + 0.5);
      g.lineTo(w - pad.r, Math.round(y(v)) + 0.5);
      g.stroke();
      g.fillStyle = "#94a3b8";
      g.fillText(this.format(v), pad.l - 8, y(v));
    }
    // Time ticks, as "-30s".
    g.textAlign = "center";
    g.textBaseline = "top";
    const every = span > 60_000 ? 30 : 10;
    for (let s = 0; s <= span / 1000; s += every) {
      g.fillStyle = "#64748b";
      g.textAlign = s === 0 ? "right" : "center";
      g.fillText(s === 0 ? "now" : `-${s}s`, x(now - s * 1000), h - pad.b + 6);
    }

    // Lines, each over a fill fading to transparent.
    g.save();
    g.beginPath();
    g.rect(pad.l, pad.t - 4, w - pad.l - pad.r + 4, h - pad.t - pad.b + 4); // room for the end dots
    g.clip();
    for (const s of this.series) {
      if (s.points.length === 0) continue;
      const fill = g.createLinearGradient(0, pad.t, 0, h - pad.b);
      fill.addColorStop(0, s.color + "55");
      fill.addColorStop(1, s.color + "00");
      g.beginPath();
      s.points.forEach(([t, v], i) => (i ? g.lineTo(x(t), y(v)) : g.moveTo(x(t), y(v))));
      g.lineTo(x(s.points[s.points.length - 1][0]), y(0));
      g.lineTo(x(s.points[0][0]), y(0));
      g.closePath();
      g.fillStyle = fill;
      g.fill();
      g.beginPath();
      s.points.forEach(([t, v], i) => (i ? g.lineTo(x(t), y(v)) : g.moveTo(x(t), y(v))));
      g.strokeStyle = s.color;
      g.lineWidth = 2;
      g.lineJoin = "round";
      g.stroke();
      const [lt, lv] = s.points[s.points.length - 1];
      g.fillStyle = s.color;
      g.beginPath();
      g.arc(x(lt), y(lv), 3.5, 0, Math.PI * 2);
      g.fill();
    }
    g.restore();
  }
}

// Live view of a running job: follows the job's event stream and updates
// the progress numbers, the job's ETA and the current run's chart (its
// timeline intervals as they close: req/s with errors, p50 and p99
// latency); when the job ends the page reloads into its results. Nothing
// else on the dashboard needs script.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !window.EventSource) { return; }
  var data = live.dataset;
  var points = (data.points || "").split("\n");
  var repeats = parseInt(data.repeats || "1", 10);
  function list(s) { return (s || "").split(" ").map(Number); }
  var pointRequests = list(data.pointRequests), pointDurations = list(data.pointDurations), pointRates = list(data.pointRates);
  function set(id, text) { var el = document.getElementById(id); if (el) { el.textContent = text; } }
  var svgNS = "http://www.w3.org/2000/svg";

  // --- the job's ETA -------------------------------------------------
  // The server's clock is the one StartedAt was read on: elapsed time is
  // measured on it, whatever the browser's clock says.
  var skew = Date.now() - Number(data.nowMs || Date.now());
  function serverNow() { return Date.now() - skew; }
  var state = {
    startedMs: Number(data.startedMs || 0), estimateS: Number(data.estimateS || 0),
    runsDone: Number(data.runsDone || 0), runsTotal: Number(data.runsTotal || 0),
    run: null, runKey: "", runStartMs: 0, requestsDone: 0
  };
  // runFraction is how far the current run is, 0..1: by its requests, its
  // duration, or a rate's schedule, whichever says more.
  function runFraction() {
    if (!state.run) { return 0; }
    var i = state.run.point, f = 0, elapsed = (serverNow() - state.runStartMs) / 1000;
    if (pointRequests[i] > 0) { f = Math.max(f, state.requestsDone / pointRequests[i]); }
    var length = pointDurations[i] || 0;
    if (pointRates[i] > 0 && pointRequests[i] > 0) {
      length = length > 0 ? Math.min(length, pointRequests[i] / pointRates[i]) : pointRequests[i] / pointRates[i];
    }
    if (length > 0 && state.runStartMs > 0) { f = Math.max(f, elapsed / length); }
    return Math.max(0, Math.min(0.99, f));
  }
  function clock(s) {
    s = Math.max(0, Math.round(s));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    var mm = (h > 0 && m < 10 ? "0" : "") + m, rr = (r < 10 ? "0" : "") + r;
    return (h > 0 ? h + ":" : "") + mm + ":" + rr;
  }
  // The ETA is the time taken so far, scaled by the share of the runs
  // left; before there is enough to scale, it is the job's estimate less
  // the time taken, an upper bound ("at most").
  function updateETA() {
    var box = document.getElementById("eta");
    if (!box || !state.startedMs || state.runsTotal <= 0) { return; }
    var elapsed = (serverNow() - state.startedMs) / 1000;
    var done = state.runsDone + runFraction(), rest, text;
    if (done >= 0.05 && elapsed > 0) {
      rest = elapsed * (state.runsTotal - done) / done;
      text = clock(rest);
    } else {
      rest = Math.max(0, state.estimateS - elapsed);
      text = "≤ " + clock(rest);
    }
    box.textContent = text;
    box.dataset.seconds = String(Math.round(rest * 10) / 10);
    box.title = "about " + clock(rest) + " left of " + clock(elapsed + rest) + "; " + state.runsDone + " of " + state.runsTotal + " runs done";
  }

  // --- the current run's chart ---------------------------------------
  var figure = document.getElementById("livechart"), svg = document.getElementById("chart");
  var series = [];          // the current run's intervals, in order
  var chartKey = "";
  var W = 960, H = 400, left = 60, right = 16, top1 = 26, h1 = 150, top2 = 222, h2 = 140;
  function el(name, attrs, text) {
    var e = document.createElementNS(svgNS, name);
    for (var k in attrs) { if (Object.prototype.hasOwnProperty.call(attrs, k)) { e.setAttribute(k, attrs[k]); } }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function fmt(v) {
    if (v >= 1e6) { return (v / 1e6).toFixed(v >= 1e7 ? 0 : 1) + "M"; }
    if (v >= 1e4) { return (v / 1e3).toFixed(0) + "k"; }
    if (v >= 1000) { return (v / 1e3).toFixed(1) + "k"; }
    if (v >= 10 || v === 0) { return v.toFixed(0); }
    return v >= 1 ? v.toFixed(1) : String(Number(v.toPrecision(1)));
  }
  function niceMax(v) {
    if (v <= 0) { return 1; }
    var p = Math.pow(10, Math.floor(Math.log10(v))), n = v / p;
    return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * p;
  }
  function polyline(cls, pts) {
    // Gaps (intervals without a value) split the line.
    var out = [], cur = [];
    pts.forEach(function (p) {
      if (p === null) { if (cur.length) { out.push(cur); } cur = []; return; }
      cur.push(p[0].toFixed(1) + "," + p[1].toFixed(1));
    });
    if (cur.length) { out.push(cur); }
    out.forEach(function (c) {
      if (c.length === 1) { c.push(c[0]); }
      svg.appendChild(el("polyline", { "class": cls, points: c.join(" ") }));
    });
  }
  function draw() {
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    var run = state.run, xEnd = 1;
    series.forEach(function (p) { xEnd = Math.max(xEnd, p.t_s + p.interval_s); });
    if (run && pointDurations[run.point] > 0) { xEnd = Math.max(xEnd, pointDurations[run.point]); }
    var plotW = W - left - right;
    function x(t) { return left + plotW * t / xEnd; }
    // req/s: succeeded, and errors (failed requests and completed ones
    // that did not succeed) as their own series, on one linear axis.
    // A timed run's last interval is cut by its end: its rates are per
    // second of what it covered, and left out when that is under a
    // quarter of an interval (as the finished page's chart does).
    var okMax = 0, runLength = run ? pointDurations[run.point] || 0 : 0;
    function rate(p, n) {
      var span = runLength > 0 ? Math.min(p.interval_s, runLength - p.t_s) : p.interval_s;
      if (span < p.interval_s / 4) { return null; }
      okMax = Math.max(okMax, n / span);
      return n / span;
    }
    var ok = series.map(function (p) { return rate(p, p.succeeded); });
    var err = series.map(function (p) { return rate(p, p.failed + p.requests - p.succeeded); });
    var yMax = niceMax(okMax), ticks = yMax / Math.pow(10, Math.floor(Math.log10(yMax))) === 2 ? 4 : 5;
    function y1(v) { return top1 + h1 - h1 * v / yMax; }
    for (var g = 0; g <= ticks; g++) {
      var gv = yMax * g / ticks;
      svg.appendChild(el("line", { "class": g ? "grid" : "axis", x1: left, x2: W - right, y1: y1(gv), y2: y1(gv) }));
      svg.appendChild(el("text", { x: left - 6, y: y1(gv) + 4, "text-anchor": "end" }, fmt(gv)));
    }
    svg.appendChild(el("text", { x: left - 6, y: top1 - 12, "text-anchor": "end" }, "req/s"));
    function mid(p) { return x(p.t_s + p.interval_s / 2); }
    polyline("s-ok", series.map(function (p, i) { return ok[i] === null ? null : [mid(p), y1(ok[i])]; }));
    polyline("s-err", series.map(function (p, i) { return err[i] === null ? null : [mid(p), y1(err[i])]; }));
    // Latency: p50 and p99 in ms on a log axis, decades from the lowest
    // to the highest value.
    var lo = Infinity, hi = 0;
    series.forEach(function (p) {
      if (p.latency_count > 0) { lo = Math.min(lo, p.p50_ms || p.p99_ms); hi = Math.max(hi, p.p99_ms); }
    });
    if (!(hi > 0)) { lo = 0.1; hi = 10; }
    var dLo = Math.floor(Math.log10(Math.max(lo, 0.001))), dHi = Math.max(dLo + 1, Math.ceil(Math.log10(hi)));
    function y2(v) { return top2 + h2 - h2 * (Math.log10(Math.max(v, Math.pow(10, dLo))) - dLo) / (dHi - dLo); }
    for (var d = dLo; d <= dHi; d++) {
      var dv = Math.pow(10, d);
      svg.appendChild(el("line", { "class": d === dLo ? "axis" : "grid", x1: left, x2: W - right, y1: y2(dv), y2: y2(dv) }));
      svg.appendChild(el("text", { x: left - 6, y: y2(dv) + 4, "text-anchor": "end" }, fmt(dv)));
    }
    svg.appendChild(el("text", { x: left - 6, y: top2 - 12, "text-anchor": "end" }, "ms"));
    function lat(key) {
      return series.map(function (p) { return p.latency_count > 0 && p[key] > 0 ? [mid(p), y2(p[key])] : null; });
    }
    polyline("s-p50", lat("p50_ms"));
    polyline("s-p99", lat("p99_ms"));
    // The time axis, in seconds from the run's start.
    var step = niceMax(xEnd / 6);
    if (step > xEnd / 3) { step /= 2; }
    for (var t = 0; t <= xEnd + 1e-9; t += step) {
      svg.appendChild(el("line", { "class": "grid", x1: x(t), x2: x(t), y1: top2 + h2, y2: top2 + h2 + 4 }));
      svg.appendChild(el("text", { x: x(t), y: H - 8, "text-anchor": "middle" }, fmt(t) + " s"));
    }
    svg.dataset.intervals = String(series.length);
  }
  function onIntervals(d) {
    var key = d.point + "/" + d.repeat, fresh = d.intervals || [];
    // A new run, or the same run started again (a sharded run redone after
    // a lost shard), starts a new chart.
    var again = series.length && fresh.length && fresh[0].t_s <= series[series.length - 1].t_s;
    if (key !== chartKey || again) { chartKey = key; series = []; }
    series = series.concat(fresh);
    noteRun(d.point, d.repeat);
    if (series.length) {
      // The run has gone at least as long as its intervals cover.
      var last = series[series.length - 1], since = serverNow() - (last.t_s + last.interval_s) * 1000;
      if (!state.runStartMs || since < state.runStartMs) { state.runStartMs = since; }
    }
    var label = points[d.point] !== undefined ? points[d.point] : d.target;
    var text = "Run: " + label + " · repeat " + (d.repeat + 1) + "/" + repeats;
    if (d.shard) { text += " · shard " + (d.shard.index + 1) + " of " + d.shard.count + " (its own intervals)"; }
    set("chartrun", text);
    figure.hidden = false;
    draw();
  }
  function noteRun(point, repeat) {
    var key = point + "/" + repeat;
    if (key === state.runKey) { return; }
    state.runKey = key;
    state.run = { point: point, repeat: repeat };
    state.runStartMs = serverNow();
    state.requestsDone = 0;
  }

  // --- the stream ------------------------------------------------------
  var es = new EventSource(data.events);
  es.addEventListener("job.started", function () {
    set("status", "running");
    document.getElementById("status").className = "status status-running";
    if (!state.startedMs) { state.startedMs = serverNow(); }
  });
  es.addEventListener("progress", function (e) {
    var p;
    try { p = JSON.parse(e.data); } catch (err) { return; }
    set("runs", p.runs_done + " / " + p.runs_total);
    set("requests", String(p.requests_done));
    set("rps", Math.round(p.current_rps || 0).toLocaleString("en-US"));
    if (p.current_run && points[p.current_run.point] !== undefined) {
      set("point", points[p.current_run.point] + " · repeat " + (p.current_run.repeat + 1) + "/" + repeats);
    }
    var bar = document.getElementById("bar");
    if (bar && p.runs_total > 0) { bar.value = Math.min(100, Math.floor(p.runs_done * 100 / p.runs_total)); }
    state.runsDone = p.runs_done;
    state.runsTotal = p.runs_total;
    if (!state.startedMs) { state.startedMs = serverNow(); }
    if (p.current_run) {
      noteRun(p.current_run.point, p.current_run.repeat);
      state.requestsDone = p.requests_done || 0;
    } else {
      state.run = null;
      state.runKey = "";
    }
    updateETA();
  });
  es.addEventListener("run.intervals", function (e) {
    var d;
    try { d = JSON.parse(e.data); } catch (err) { return; }
    if (figure && svg) { onIntervals(d); }
  });
  es.addEventListener("run.finished", function () { set("livestate", "A run finished; updating as the job runs."); });
  var etaTimer = window.setInterval(updateETA, 1000);
  updateETA();
  function ended() {
    es.close();
    window.clearInterval(etaTimer);
    set("livestate", "The job ended; loading its results…");
    window.location.reload();
  }
  // The final event types come from the page, which takes them from the
  // server's one table of event names.
  (data.finalEvents || "").split(" ").forEach(function (t) { if (t) { es.addEventListener(t, ended); } });
  // A stream that keeps ending without a final event (the server ends it
  // for a finished job whose final event expired) is settled by a reload,
  // which shows whatever the job is now; a reload of a running job only
  // starts the live view again.
  var failures = 0;
  es.onerror = function () {
    failures += 1;
    set("livestate", "Connection to the event stream lost; retrying…");
    if (failures >= 3) { es.close(); window.location.reload(); }
  };
}());

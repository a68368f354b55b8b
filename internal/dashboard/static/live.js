// Live view of a running job: follows the job's event stream and updates
// the progress numbers; when the job ends the page reloads into its
// results. Nothing else on the dashboard needs script.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !window.EventSource) { return; }
  var points = (live.dataset.points || "").split("\n");
  var repeats = parseInt(live.dataset.repeats || "1", 10);
  function set(id, text) { var el = document.getElementById(id); if (el) { el.textContent = text; } }
  var es = new EventSource(live.dataset.events);
  es.addEventListener("job.started", function () {
    set("status", "running");
    document.getElementById("status").className = "status status-running";
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
  });
  es.addEventListener("run.finished", function () { set("livestate", "A run finished; updating as the job runs."); });
  function ended() {
    es.close();
    set("livestate", "The job ended; loading its results…");
    window.location.reload();
  }
  // The final event types come from the page, which takes them from the
  // server's one table of event names.
  (live.dataset.finalEvents || "").split(" ").forEach(function (t) { if (t) { es.addEventListener(t, ended); } });
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

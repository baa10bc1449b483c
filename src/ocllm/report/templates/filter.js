(function () {
  "use strict";
  var bar = document.querySelector("[data-filters]");
  var box = document.getElementById("task-filter");
  var select = document.getElementById("verdict-filter");
  var out = document.getElementById("task-count");
  if (!bar || !box || !select || !out) { return; }
  var tasks = Array.prototype.slice.call(document.querySelectorAll("details.task"));
  // A large run lists the tasks not drawn in full as rows of a table: filtered by their text.
  var rows = Array.prototype.slice.call(document.querySelectorAll("table[data-task-index] tr[data-v]"));
  var total = tasks.length + rows.length;
  function keep(v, text, query, verdict) {
    var okVerdict = !verdict || v === verdict || (verdict === "failing" && v !== "correct");
    return okVerdict && (!query || text.indexOf(query) !== -1);
  }
  function apply() {
    var query = box.value.trim().toLowerCase();
    var verdict = select.value;
    var shown = 0;
    tasks.forEach(function (task) {
      task.hidden = !keep(task.getAttribute("data-verdict"), task.getAttribute("data-search") || "", query, verdict);
      if (!task.hidden) { shown += 1; }
    });
    rows.forEach(function (row) {
      row.hidden = !keep(row.getAttribute("data-v"), query ? row.textContent.toLowerCase() : "", query, verdict);
      if (!row.hidden) { shown += 1; }
    });
    out.textContent = shown === total ? total + " tasks" : shown + " of " + total + " tasks";
  }
  box.addEventListener("input", apply);
  select.addEventListener("change", apply);
  bar.hidden = false;
  apply();
})();

(function () {
  "use strict";
  var bar = document.querySelector("[data-filters]");
  var box = document.getElementById("task-filter");
  var select = document.getElementById("verdict-filter");
  var out = document.getElementById("task-count");
  if (!bar || !box || !select || !out) { return; }
  var tasks = Array.prototype.slice.call(document.querySelectorAll("details.task"));
  function apply() {
    var query = box.value.trim().toLowerCase();
    var verdict = select.value;
    var shown = 0;
    tasks.forEach(function (task) {
      var v = task.getAttribute("data-verdict");
      var okVerdict = !verdict || v === verdict || (verdict === "failing" && v !== "correct");
      var okText = !query || (task.getAttribute("data-search") || "").indexOf(query) !== -1;
      task.hidden = !(okVerdict && okText);
      if (!task.hidden) { shown += 1; }
    });
    out.textContent = shown === tasks.length ? tasks.length + " tasks" : shown + " of " + tasks.length + " tasks";
  }
  box.addEventListener("input", apply);
  select.addEventListener("change", apply);
  bar.hidden = false;
  apply();
})();

// Sorting and filtering without a server: every table.sortable sorts on header click by its cells'
// data-sort values (a figure best first on the first click: data-best="high" or "low"); every .filters
// block filters the rows (or cards) it names by text and by data-*, shows the columns its chooser ticks,
// and keeps its state in the URL (?KEY.PARAM=value), so a view can be linked and reloads the same.
(function () {
  "use strict";
  var params = new URLSearchParams(window.location.search);
  function save() {
    var url = window.location.pathname + (params.toString() ? "?" + params.toString() : "") + window.location.hash;
    window.history.replaceState(null, "", url);
  }
  function cmp(a, b, numeric) {
    if (a === "" || b === "") { return a === b ? 0 : (a === "" ? 1 : -1); }
    return numeric ? Number(a) - Number(b) : a.localeCompare(b);
  }
  function key(row, col) {
    var cell = row.cells[col];
    if (!cell) { return ""; }
    var v = cell.getAttribute("data-sort");
    return v === null ? cell.textContent.trim() : v;
  }
  function stateKey(table) {
    var box = document.querySelector('.filters[data-table="#' + table.id + '"]');
    return box ? box.getAttribute("data-key") : null;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    var name = stateKey(table);
    function sortBy(th, col, desc) {
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", desc ? "descending" : "ascending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var numeric = rows.every(function (r) { var k = key(r, col); return k === "" || !isNaN(Number(k)); });
      rows.forEach(function (r, i) { r._i = i; });
      rows.sort(function (a, b) {
        var c = cmp(key(a, col), key(b, col), numeric);
        if (c !== 0 && key(a, col) !== "" && key(b, col) !== "") { c = desc ? -c : c; }
        return c || a._i - b._i;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    }
    Array.prototype.forEach.call(heads, function (th, col) {
      if (th.hasAttribute("data-nosort")) { return; }
      th.classList.add("sortable");
      th.setAttribute("tabindex", "0");
      function sort() {
        var now = th.getAttribute("aria-sort");
        // first click: best first (the highest throughput, the lowest cost); then it reverses
        var desc = now ? now === "ascending" : th.getAttribute("data-best") === "high";
        sortBy(th, col, desc);
        if (name && th.getAttribute("data-key")) {
          params.set(name + ".sort", th.getAttribute("data-key") + (desc ? ".desc" : ".asc"));
          save();
        }
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
    });
    var wanted = name ? params.get(name + ".sort") : null;
    if (wanted) {
      var parts = wanted.split(".");
      Array.prototype.forEach.call(heads, function (th, col) {
        if (th.getAttribute("data-key") === parts[0]) { sortBy(th, col, parts[1] === "desc"); }
      });
    }
  });
  document.querySelectorAll(".filters").forEach(function (box) {
    var items = document.querySelectorAll(box.getAttribute("data-items"));
    var table = box.getAttribute("data-table") ? document.querySelector(box.getAttribute("data-table")) : null;
    var name = box.getAttribute("data-key");
    var count = box.querySelector(".count");
    var controls = box.querySelectorAll("input[type=search],select");
    var columns = box.querySelectorAll("input[data-column]");
    if (name) {  // a linked view: the URL's values win over the page's defaults
      controls.forEach(function (c) {
        var v = params.get(name + "." + c.getAttribute("data-param"));
        if (v !== null && (c.tagName !== "SELECT" || c.querySelector('option[value="' + CSS.escape(v) + '"]'))) { c.value = v; }
      });
      var cols = params.get(name + ".cols");
      if (cols !== null) {
        var on = cols.split(",");
        columns.forEach(function (c) { c.checked = on.indexOf(c.getAttribute("data-column")) >= 0; });
      }
    }
    function showColumns() {
      if (!table) { return; }
      columns.forEach(function (c) { table.classList.toggle("show-" + c.getAttribute("data-column"), c.checked); });
    }
    function apply() {
      var shown = 0;
      items.forEach(function (item) {
        var ok = true;
        controls.forEach(function (c) {
          var v = c.value.trim().toLowerCase();
          if (!v) { return; }
          var field = c.getAttribute("data-field");
          if (field) {
            var have = (item.getAttribute("data-" + field) || "").toLowerCase().split(" ");
            ok = ok && have.indexOf(v) >= 0;
          } else {
            ok = ok && item.textContent.toLowerCase().indexOf(v) >= 0;
          }
        });
        item.hidden = !ok;
        if (ok) { shown += 1; }
      });
      if (count) { count.textContent = shown + " of " + items.length + " shown"; }
    }
    function remember() {
      if (!name) { return; }
      controls.forEach(function (c) { params.set(name + "." + c.getAttribute("data-param"), c.value); });
      params.set(name + ".cols", Array.prototype.filter.call(columns, function (c) { return c.checked; })
        .map(function (c) { return c.getAttribute("data-column"); }).join(","));
      save();
    }
    controls.forEach(function (c) {
      c.addEventListener("input", function () { apply(); remember(); });
      c.addEventListener("change", function () { apply(); remember(); });
    });
    columns.forEach(function (c) { c.addEventListener("change", function () { showColumns(); remember(); }); });
    showColumns();
    apply();
  });
  // the comparison chart's legend: a button per GPU and per engine shows or hides its points and lines
  document.querySelectorAll(".legend-toggles").forEach(function (legend) {
    var figure = document.getElementById(legend.getAttribute("data-for"));
    function refresh() {
      var off = {};
      legend.querySelectorAll("button[aria-pressed=false]").forEach(function (b) {
        off[b.getAttribute("data-kind") + ":" + b.getAttribute("data-value")] = true;
      });
      figure.querySelectorAll("[data-gpu]").forEach(function (el) {
        var hide = off["gpu:" + el.getAttribute("data-gpu")] ||
          (el.hasAttribute("data-engine") && off["engine:" + el.getAttribute("data-engine")]);
        if (el.hasAttribute("data-engines")) {
          // a GPU has one frontier line per set of its engines: show the one of exactly the engines
          // still shown, the frontier of the points on view (never a line through hidden points)
          var shown = el.getAttribute("data-all-engines").split(" ").filter(function (e) {
            return !off["engine:" + e];
          }).join(" ");
          hide = hide || el.getAttribute("data-engines") !== shown;
        }
        el.style.display = hide ? "none" : "";
      });
    }
    legend.querySelectorAll("button").forEach(function (b) {
      b.addEventListener("click", function () {
        b.setAttribute("aria-pressed", b.getAttribute("aria-pressed") === "false" ? "true" : "false");
        refresh();
      });
    });
  });
  // the comparison chart's measure: throughput per GPU or cost per 1M output tokens
  document.querySelectorAll(".measure-switch").forEach(function (box) {
    var figure = document.getElementById(box.getAttribute("data-for"));
    box.querySelectorAll("input").forEach(function (input) {
      input.addEventListener("change", function () {
        figure.querySelectorAll(".measure").forEach(function (el) {
          el.hidden = el.getAttribute("data-measure") !== input.value;
        });
      });
    });
  });
}());

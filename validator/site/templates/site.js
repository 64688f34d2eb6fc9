// Sorting and filtering without a server: every table.sortable sorts on header click by its cells'
// data-sort values; every .filters block filters the rows (or cards) it names by text and by data-*.
(function () {
  "use strict";
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
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      if (th.hasAttribute("data-nosort")) { return; }
      th.classList.add("sortable");
      th.setAttribute("tabindex", "0");
      function sort() {
        var desc = th.getAttribute("aria-sort") === "ascending";
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
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
    });
  });
  document.querySelectorAll(".filters").forEach(function (box) {
    var items = document.querySelectorAll(box.getAttribute("data-items"));
    var count = box.querySelector(".count");
    var controls = box.querySelectorAll("input,select");
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
    controls.forEach(function (c) { c.addEventListener("input", apply); c.addEventListener("change", apply); });
    apply();
  });
}());

(function () {
  "use strict";
  var form = document.getElementById("filters");
  if (!form || form.getAttribute("data-client") !== "1") { return; }
  var entries = document.querySelectorAll("details.entry");
  var shown = document.getElementById("shown");
  function has(el, key, value) {
    if (!value) { return true; }
    var list = JSON.parse(el.getAttribute("data-" + key) || "[]");
    return list.indexOf(value) >= 0;
  }
  function apply() {
    var f = form.elements.failure.value, t = form.elements.tag.value;
    var r = form.elements.risk.value, g = form.elements.target.value;
    var s = form.elements.status.value, n = 0;
    for (var i = 0; i < entries.length; i++) {
      var e = entries[i];
      var ok = has(e, "failures", f) && has(e, "tags", t) &&
        (!r || e.getAttribute("data-risk") === r) &&
        (!g || e.getAttribute("data-target") === g) &&
        (!s || e.getAttribute("data-status") === s);
      e.hidden = !ok;
      if (ok) { n++; }
    }
    if (shown) { shown.textContent = String(n); }
  }
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (ev) { ev.preventDefault(); apply(); });
  apply();
}());

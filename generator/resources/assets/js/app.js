/* Overview filters, recipe-grid controls and aicr hash-route translation. Works from the
   static pages alone (no server, no fetch): every value it needs is in data-* attributes. */
(function () {
  "use strict";

  function all(root, sel) { return Array.prototype.slice.call(root.querySelectorAll(sel)); }

  /* ------------------------------------------------------------- state in the URL */
  /* Filter and lens choices live in the query string (`?state=CONFIRMED&clean=1`), so a
     reload or a shared link shows the same view; the hash stays free for anchors, tabs and
     aicr routes. Only the keys of `controls` are written; other parameters are kept. */
  function controlValue(c) {
    return c.type === "checkbox" ? (c.checked ? "1" : "") : c.value;
  }

  function restoreControls(controls, key) {
    var params = new URLSearchParams(window.location.search);
    controls.forEach(function (c) {
      var k = key(c);
      if (!params.has(k)) { return; }
      var v = params.get(k);
      if (c.type === "checkbox") { c.checked = v === "1"; return; }
      if (c.tagName === "SELECT" && !all(c, "option").some(function (o) { return o.value === v; })) {
        return;  /* an unknown value in a shared link: keep the default */
      }
      c.value = v;
    });
  }

  function storeControls(controls, key) {
    if (!window.history || !window.history.replaceState) { return; }
    var params = new URLSearchParams(window.location.search);
    controls.forEach(function (c) {
      var v = controlValue(c);
      var dflt = c.type === "checkbox" ? "" : (c.getAttribute("data-default") || "");
      if (v === dflt) { params.delete(key(c)); } else { params.set(key(c), v); }
    });
    var query = params.toString();
    var url = window.location.pathname + (query ? "?" + query : "") + window.location.hash;
    if (url !== window.location.pathname + window.location.search + window.location.hash) {
      window.history.replaceState(window.history.state, "", url);
    }
  }

  /* ------------------------------------------------------------- wide tables */
  /* A box whose table is wider than it scrolls sideways; mark it so the CSS shows the cue. */
  function markOverflow() {
    all(document, ".table-scroll, .md-typeset__scrollwrap").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth + 1) { box.setAttribute("data-overflow", "1"); }
      else { box.removeAttribute("data-overflow"); }
    });
  }

  /* ------------------------------------------------------------- overview filters */
  function setupFilters() {
    var box = document.getElementById("overview-filters");
    var catalog = document.getElementById("catalog");
    if (!box || !catalog || box.getAttribute("data-ready")) { return; }
    box.setAttribute("data-ready", "1");
    var controls = all(box, "[data-filter]");
    function filterKey(c) { return c.getAttribute("data-filter"); }
    restoreControls(controls, filterKey);
    function apply() {
      var want = {};
      controls.forEach(function (c) {
        var k = c.getAttribute("data-filter");
        want[k] = c.type === "checkbox" ? (c.checked ? "1" : "") : c.value;
      });
      var shown = 0;
      var rows = all(catalog, ".catalog-row");
      rows.forEach(function (row) {
        var ok = Object.keys(want).every(function (k) {
          return !want[k] || row.getAttribute("data-" + k) === want[k];
        });
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      all(catalog, ".catalog-dashboard").forEach(function (d) {
        d.hidden = all(d, ".catalog-row:not([hidden])").length === 0;
      });
      all(catalog, ".catalog-group").forEach(function (g) {
        g.hidden = all(g, ".catalog-row:not([hidden])").length === 0;
      });
      var empty = catalog.querySelector(".catalog-empty");
      if (empty) { empty.hidden = shown !== 0; }
      var count = box.querySelector(".filter-count");
      if (count) { count.textContent = shown + " of " + rows.length + " recipes shown"; }
      storeControls(controls, filterKey);
    }
    controls.forEach(function (c) { c.addEventListener("change", apply); });
    var reset = box.querySelector(".filter-reset");
    if (reset) {
      reset.addEventListener("click", function () {
        controls.forEach(function (c) { if (c.type === "checkbox") { c.checked = false; } else { c.value = ""; } });
        apply();
      });
    }
    box.evidenceApply = apply;
    apply();
  }

  function setFilters(values) {
    var box = document.getElementById("overview-filters");
    if (!box) { return; }
    all(box, "[data-filter]").forEach(function (c) {
      var k = c.getAttribute("data-filter");
      if (c.type === "checkbox") { c.checked = false; }
      else { c.value = Object.prototype.hasOwnProperty.call(values, k) ? values[k] : ""; }
    });
    if (box.evidenceApply) { box.evidenceApply(); }
  }

  /* ------------------------------------------------------------- aicr hash routes */
  function routeHash() {
    var hash = window.location.hash;
    var catalog = document.getElementById("catalog");
    if (!catalog || !hash || hash.indexOf("#/") !== 0) { return; }
    var routes;
    try { routes = JSON.parse(catalog.getAttribute("data-routes")); } catch (e) { return; }
    var parts = hash.slice(2).split("/").filter(function (s) { return s !== ""; })
      .map(function (s) { try { return decodeURIComponent(s); } catch (e) { return s; } });
    var target = null;
    if (parts.length >= 4 && /^[0-9a-f]{64}$/.test(parts[3]) && routes.sources[parts[3]]) {
      target = routes.sources[parts[3]];
    } else if (parts.length >= 3) {
      target = routes.tabs[parts.slice(0, 3).join("/")] || null;
    }
    if (target) {
      var url = new URL(target, new URL(catalog.getAttribute("data-root") || "./", window.location.href));
      window.location.replace(url.href);
      return;
    }
    var values = {};
    if (parts.length >= 1) { values.service = parts[0]; }
    if (parts.length >= 2) {
      var row = catalog.querySelector(".catalog-row[data-service='" + CSS.escape(parts[0]) +
        "'][data-dashboard='" + CSS.escape(parts[1]) + "']");
      if (row) {
        values.accelerator = row.getAttribute("data-accelerator");
        values.os = row.getAttribute("data-os");
      }
    }
    setFilters(values);
  }

  /* ------------------------------------------------------------- recipe grid controls */
  function setupGrid() {
    var box = document.querySelector(".grid-controls");
    if (!box || box.getAttribute("data-ready")) { return; }
    box.setAttribute("data-ready", "1");
    var filter = box.querySelector("[data-grid='filter']");
    var nonpass = box.querySelector("[data-grid='nonpassing']");
    var sort = box.querySelector("[data-grid='sort']");
    var lens = box.querySelector("[data-grid='lens']");
    var k8s = box.querySelector("[data-grid='k8s']");
    var bad = { CONTESTED: 1, FAILING: 1, UNTESTED: 1 };
    var gridControls = [filter, nonpass, sort, lens, k8s];
    function gridKey(c) { return c.getAttribute("data-grid"); }
    sort.setAttribute("data-default", "phase");
    lens.setAttribute("data-default", "combined");
    restoreControls(gridControls, gridKey);
    function apply() {
      var text = (filter.value || "").toLowerCase();
      all(document, ".grid-lens").forEach(function (l) {
        l.hidden = l.getAttribute("data-lens") !== lens.value;
      });
      all(document, ".grid-lens").forEach(function (l) {
        all(l, "tbody.grid-phase").forEach(function (body) {
          var rows = all(body, "tr.grid-row");
          rows.forEach(function (r) {
            var name = (r.getAttribute("data-name") || "").toLowerCase();
            var ok = name.indexOf(text) !== -1 || (text === "" );
            if (nonpass.checked && !bad[r.getAttribute("data-state")]) { ok = false; }
            r.hidden = !ok;
            all(r, "td.cell").forEach(function (c) {
              var v = c.getAttribute("data-k8s");
              c.classList.toggle("lens-dim", !!k8s.value && v !== "" && v !== k8s.value);
            });
          });
          var key = sort.value;
          rows.sort(function (a, b) {
            if (key === "severity") {
              return (+a.getAttribute("data-rank")) - (+b.getAttribute("data-rank")) ||
                (+a.getAttribute("data-order")) - (+b.getAttribute("data-order"));
            }
            if (key === "name") {
              return a.getAttribute("data-name").localeCompare(b.getAttribute("data-name"));
            }
            return (+a.getAttribute("data-order")) - (+b.getAttribute("data-order"));
          });
          rows.forEach(function (r) { body.appendChild(r); });
        });
      });
      storeControls(gridControls, gridKey);
      markOverflow();
    }
    all(document, "tr.grid-row").forEach(function (r, i) { r.setAttribute("data-order", String(i)); });
    [filter, nonpass, sort, lens, k8s].forEach(function (c) {
      c.addEventListener("input", apply);
      c.addEventListener("change", apply);
    });
    apply();
  }

  /* ------------------------------------------------------------- recipe page tabs */
  /* The tabs work without JavaScript (radio inputs + CSS :has). This only keeps the URL and
     the selected tab in step: `#evidence` opens the Evidence tab, an anchor inside a panel
     opens that panel (and a grid row's lens) and stays in the URL, and choosing a tab
     updates the hash without scrolling. */
  var followingHash = false;

  function choose(input) {
    if (!input || input.checked) { return; }
    input.checked = true;
    followingHash = true;  /* opened for an anchor: the anchor stays the hash */
    try {
      input.dispatchEvent(new Event("change", { bubbles: true }));
    } finally {
      followingHash = false;
    }
  }

  function showLens(target) {
    var shown = target.closest(".grid-lens");
    var lens = document.querySelector(".grid-controls [data-grid='lens']");
    if (!shown || !shown.hidden || !lens) { return; }
    lens.value = shown.getAttribute("data-lens");
    lens.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function tabForHash() {
    var tabs = document.querySelector(".ev-tabs");
    var id = window.location.hash.slice(1);
    if (!tabs || !id || id.charAt(0) === "/") { return; }
    try { id = decodeURIComponent(id); } catch (e) { return; }
    var target = document.getElementById(id);
    if (!target || !tabs.contains(target)) { return; }
    if (target.matches(".ev-tab-labels input")) { choose(target); return; }
    var panel = target.closest(".ev-panel");
    if (panel) {
      choose(document.getElementById(panel.getAttribute("data-tab")));
      showLens(target);
      target.scrollIntoView();
    }
  }

  function setupTabs() {
    var tabs = document.querySelector(".ev-tabs");
    if (!tabs || tabs.getAttribute("data-ready")) { return; }
    tabs.setAttribute("data-ready", "1");
    all(tabs, ".ev-tab-labels input").forEach(function (input) {
      input.addEventListener("change", function () {
        if (input.checked && !followingHash && window.history && window.history.replaceState) {
          window.history.replaceState(window.history.state, "", "#" + input.id);
        }
      });
    });
    tabForHash();
  }

  function boot() { setupFilters(); setupGrid(); setupTabs(); routeHash(); markOverflow(); }
  window.addEventListener("resize", markOverflow);
  document.addEventListener("change", function (ev) {
    if (ev.target && ev.target.matches && ev.target.matches(".ev-tab-labels input")) { markOverflow(); }
  });
  window.addEventListener("hashchange", function () { routeHash(); tabForHash(); });
  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(function () { boot(); });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", boot);
  } else {
    boot();
  }
})();

/* Draws every .evidence-chart from its data-figure attribute (HTML-escaped JSON) with the
   locally served plotly-basic.min.js, and re-themes charts when the Material palette changes.
   Plotly (1.2 MB) is loaded only when a page has a chart to draw, from next to this file.
   Runs on Material's document$ (instant navigation) and on DOMContentLoaded (direct loads,
   file://). No network, no inline scripts. */
(function () {
  "use strict";

  var self = document.currentScript;
  var plotlySrc = new URL("plotly-basic.min.js", self ? self.src : window.location.href).href;
  var waiting = null;

  /* Add the plotly script once; `done` runs when it has loaded. */
  function loadPlotly(done) {
    if (typeof window.Plotly !== "undefined") { done(); return; }
    if (waiting) { waiting.push(done); return; }
    waiting = [done];
    var s = document.createElement("script");
    s.src = plotlySrc;
    s.onload = function () { var w = waiting; waiting = []; w.forEach(function (f) { f(); }); };
    document.head.appendChild(s);
  }

  function cssVar(name, fallback) {
    var v = getComputedStyle(document.body).getPropertyValue(name);
    return (v && v.trim()) || fallback;
  }

  function theme() {
    var dark = document.body.getAttribute("data-md-color-scheme") === "slate";
    var fg = cssVar("--md-default-fg-color", dark ? "#e2e4e9" : "#000000");
    var grid = dark ? "rgba(255,255,255,0.15)" : "rgba(0,0,0,0.12)";
    return {
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
      "font.color": fg,
      "xaxis.gridcolor": grid,
      "yaxis.gridcolor": grid,
      "xaxis.zerolinecolor": grid,
      "yaxis.zerolinecolor": grid
    };
  }

  function drawAll() {
    var nodes = Array.prototype.filter.call(
      document.querySelectorAll(".evidence-chart:not([data-drawn])"),
      function (el) { return el.offsetParent !== null; });  /* hidden tab: drawn when shown */
    if (nodes.length === 0) { return; }
    if (typeof window.Plotly === "undefined") { loadPlotly(drawAll); return; }
    nodes.forEach(function (el) {
      var fig;
      try { fig = JSON.parse(el.getAttribute("data-figure")); } catch (e) {
        el.textContent = "chart data could not be read; the table below has the numbers";
        el.setAttribute("data-drawn", "error");
        return;
      }
      el.setAttribute("data-drawn", "1");
      window.Plotly.newPlot(el, fig.data, fig.layout,
        { responsive: true, displaylogo: false }).then(function () {
        window.Plotly.relayout(el, theme());
        el.setAttribute("data-themed", document.body.getAttribute("data-md-color-scheme") || "default");
      });
    });
  }

  function retheme() {
    if (typeof window.Plotly === "undefined") { return; }
    var t = theme();
    var scheme = document.body.getAttribute("data-md-color-scheme") || "default";
    Array.prototype.forEach.call(document.querySelectorAll(".evidence-chart[data-drawn='1']"),
      function (el) {
        window.Plotly.relayout(el, t).then(function () { el.setAttribute("data-themed", scheme); });
      });
  }

  /* a recipe tab became visible: draw its charts at their real size, resize drawn ones */
  document.addEventListener("change", function (ev) {
    var t = ev.target;
    if (!t || !t.matches || !t.matches(".ev-tab-labels input")) { return; }
    drawAll();
    if (typeof window.Plotly === "undefined") { return; }
    Array.prototype.forEach.call(document.querySelectorAll(".evidence-chart[data-drawn='1']"),
      function (el) { if (el.offsetParent !== null) { window.Plotly.Plots.resize(el); } });
  });

  var observer = new MutationObserver(retheme);
  function watch() {
    observer.observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
  }

  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(function () { drawAll(); });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { watch(); drawAll(); });
  } else {
    watch();
    drawAll();
  }
})();

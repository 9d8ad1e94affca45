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

  /* Break a label into lines of about `width` characters at spaces, slashes and hyphens
     (the text is already escaped for Plotly; only our own <br> is markup). */
  function wrap(text, width) {
    var words = String(text).split(/(?<=[ \/-])/);
    var lines = [""];
    words.forEach(function (w) {
      var last = lines.length - 1;
      if (lines[last].length > 0 && (lines[last] + w).length > width) { lines.push(w); }
      else { lines[last] += w; }
    });
    return lines.map(function (l) { return l.trim(); }).join("<br>");
  }

  var NARROW = 560;

  /* On a narrow container a bar chart of signers turns into horizontal bars with wrapped
     signer names (vertical bars' rotated labels overlap the legend on a phone); every chart
     gets a wrapped title and a legend under the plot. */
  function fitTo(el, fig) {
    var width = el.clientWidth;
    if (width >= NARROW) { return fig; }
    var layout = fig.layout;
    layout.margin = { l: 10, r: 10, t: 90, b: 10 };
    layout.title = { text: wrap(layout.title && layout.title.text || "", 40), font: { size: 13 } };
    layout.legend = { orientation: "h", x: 0, y: -0.15, yanchor: "top" };
    if (el.getAttribute("data-kind") === "latest") {
      var count = 0;
      fig.data.forEach(function (t) {
        var x = t.x;
        t.x = t.y;
        t.y = (x || []).map(function (name) { return wrap(name, 18); });
        if (t.type === "bar") {
          t.orientation = "h";
          t.hovertemplate = "%{y}: %{x} GB/s<extra></extra>";
          count = t.y.length;
        }
      });
      /* axis titles would collide with the legend: the unit goes into the title instead */
      layout.title.text += "<br>bus bandwidth, GB/s";
      layout.xaxis = { rangemode: "tozero", automargin: true };
      layout.yaxis = { automargin: true, autorange: "reversed" };
      layout.height = 220 + 56 * count;
    } else {
      layout.height = 380;
    }
    return fig;
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
      fig = fitTo(el, fig);
      el.setAttribute("data-fit", el.clientWidth < NARROW ? "narrow" : "wide");
      window.Plotly.newPlot(el, fig.data, fig.layout, {
        responsive: true, displaylogo: false, displayModeBar: el.clientWidth >= NARROW
      }).then(function () {
        window.Plotly.relayout(el, theme());
        /* the chart now shows the history: its table folds away (it stays open without JS) */
        var next = el.nextElementSibling;
        if (el.getAttribute("data-kind") === "history" && next && next.matches("details.chart-history")) {
          next.open = false;
        }
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

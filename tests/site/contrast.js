/* WCAG 2.2 contrast of every visible text element against its composited background, from
   the rendered styles (run by tests/site/test_customer_browser.py through page.evaluate). */
() => {
  function parse(c) {
    if (!c) { return null; }
    var m = c.match(/^rgba?\(([^)]+)\)$/);
    if (m) {
      var p = m[1].split(/[\s,\/]+/).filter(Boolean).map(parseFloat);
      return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
    }
    m = c.match(/^color\(srgb ([^)]+)\)$/);
    if (m) {
      var q = m[1].split(/[\s\/]+/).filter(Boolean).map(parseFloat);
      return [q[0] * 255, q[1] * 255, q[2] * 255, q.length > 3 ? q[3] : 1];
    }
    return null;
  }
  function over(top, bottom) {
    var a = top[3];
    return [0, 1, 2].map(function (i) { return top[i] * a + bottom[i] * (1 - a); }).concat([1]);
  }
  function lum(c) {
    var v = [0, 1, 2].map(function (i) {
      var s = c[i] / 255;
      return s <= 0.03928 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  }
  function background(el) {
    var layers = [];
    for (var n = el; n && n.nodeType === 1; n = n.parentElement) {
      var b = parse(getComputedStyle(n).backgroundColor);
      if (b && b[3] > 0) { layers.push(b); if (b[3] >= 1) { break; } }
    }
    var bg = [255, 255, 255, 1];
    if (!layers.length || layers[layers.length - 1][3] < 1) {
      var root = parse(getComputedStyle(document.body).backgroundColor);
      if (root && root[3] >= 1) { bg = root; }
    }
    for (var i = layers.length - 1; i >= 0; i--) { bg = over(layers[i], bg); }
    return bg;
  }
  function visible(el) {
    if (el.closest("svg, .evidence-chart, [hidden], .md-search, noscript, script, style")) { return false; }
    var r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) { return false; }
    for (var n = el; n && n.nodeType === 1; n = n.parentElement) {
      var s = getComputedStyle(n);
      if (s.display === "none" || s.visibility === "hidden" || parseFloat(s.opacity) === 0) { return false; }
      if (s.clip === "rect(0px, 0px, 0px, 0px)" || s.clipPath === "inset(50%)") { return false; }
    }
    return true;
  }
  var out = [];
  var seen = 0;
  document.querySelectorAll("body *").forEach(function (el) {
    var text = "";
    el.childNodes.forEach(function (n) { if (n.nodeType === 3) { text += n.textContent; } });
    text = text.trim();
    if (!text || !visible(el)) { return; }
    seen += 1;
    var s = getComputedStyle(el);
    var fg = parse(s.color);
    if (!fg) { out.push({text: text.slice(0, 40), error: "colour " + s.color}); return; }
    var bg = background(el);
    var opacity = 1;
    for (var n = el; n && n.nodeType === 1; n = n.parentElement) { opacity *= parseFloat(getComputedStyle(n).opacity); }
    fg = over([fg[0], fg[1], fg[2], fg[3] * opacity], bg);
    var l1 = lum(fg), l2 = lum(bg);
    var ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    var size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight, 10) >= 700;
    var large = size >= 24 || (bold && size >= 18.66);
    var need = large ? 3 : 4.5;
    if (ratio < need) {
      out.push({text: text.slice(0, 40), tag: el.tagName.toLowerCase(), cls: String(el.className).slice(0, 60),
        ratio: Math.round(ratio * 100) / 100, need: need, color: s.color, bg: "rgb(" + bg.slice(0, 3).map(Math.round).join(",") + ")"});
    }
  });
  /* UI components: the border that shows a control's edge needs 3:1 against its background */
  document.querySelectorAll("select, input[type=search], input[type=text]").forEach(function (el) {
    if (!visible(el)) { return; }
    seen += 1;
    var s = getComputedStyle(el);
    var edge = parse(s.borderTopColor);
    if (!edge || parseFloat(s.borderTopWidth) === 0) { return; }
    var bg = background(el.parentElement);
    var c = over(edge, bg);
    var l1 = lum(c), l2 = lum(bg);
    var ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    if (ratio < 3) {
      out.push({text: "control border", tag: el.tagName.toLowerCase(), cls: String(el.className).slice(0, 60),
        ratio: Math.round(ratio * 100) / 100, need: 3, color: s.borderTopColor});
    }
  });
  return {checked: seen, failures: out};
}

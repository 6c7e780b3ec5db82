// Lists visible text whose contrast against its background is below WCAG 2 AA (4.5:1; 3:1 for
// large text: 24 px, or 18.66 px bold). Run in the page by the dashboard's browser test.
function rgba(s) {
  const m = s.match(/rgba?\(([^)]+)\)/);
  if (!m) return [0, 0, 0, 0];
  const p = m[1].split(",").map((x) => parseFloat(x));
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
}
function lum(c) {
  const ch = c.slice(0, 3).map((v) => {
    v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
}
function background(e) {
  // The first opaque background up the tree (white at the top).
  for (let n = e; n && n.nodeType === 1; n = n.parentElement) {
    const c = rgba(getComputedStyle(n).backgroundColor);
    if (c[3] >= 0.99) return c;
  }
  return [255, 255, 255, 1];
}
const low = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let t = walker.nextNode(); t; t = walker.nextNode()) {
  if (!t.textContent.trim()) continue;
  const e = t.parentElement;
  if (!e || e.closest("[hidden]") || e.closest("svg")) continue;
  const st = getComputedStyle(e);
  if (st.visibility === "hidden" || st.display === "none") continue;
  const r = e.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) continue;
  const fg = rgba(st.color), bg = background(e);
  const l1 = lum(fg), l2 = lum(bg);
  const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
  const size = parseFloat(st.fontSize), bold = parseInt(st.fontWeight, 10) >= 700;
  const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
  if (ratio < need) low.push(`${ratio.toFixed(2)} < ${need}: "${t.textContent.trim().slice(0, 40)}" (${st.color} on rgb(${bg.slice(0, 3).join(", ")}))`);
}
return low;

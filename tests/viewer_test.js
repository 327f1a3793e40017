// viewer_test.js PAGE.html SCREENSHOT.png NAME — opens the page of `omopt dot -o FILE.html` in
// headless Chromium (playwright-core; CHROMIUM: its executable), searches NAME in the search
// box, and checks that a node whose label contains NAME is the current, highlighted match and
// on screen; then clicks it and checks the panel shows its attributes; then collapses the
// repeated blocks. Writes a screenshot. Prints one JSON line; exit 0 when every check holds.
const path = require("path");
const { chromium } = require(process.env.PLAYWRIGHT_CORE || "playwright-core");
(async () => {
  const [page_path, shot, name] = process.argv.slice(2);
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu"] });
  const failures = [];
  const requests = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
    await page.goto("file://" + path.resolve(page_path), { timeout: 50000 });
    await page.waitForFunction(() => window.omoptViewer, null, { timeout: 30000 });
    const nodes = await page.evaluate(() => window.omoptViewer.nodes);
    await page.fill("#q", name);
    const cur = await page.evaluate(() => window.omoptViewer.current());
    const count = await page.textContent("#count");
    if (!cur || !cur.highlighted || cur.text.indexOf(name) < 0)
      failures.push("search: the current match is not the node " + JSON.stringify(cur));
    // the highlighted node is drawn inside the visible part of the page
    const box = await page.evaluate(() => {
      const r = document.querySelector("g.node.current").getBoundingClientRect();
      return { x: r.x, y: r.y, w: r.width, h: r.height };
    });
    if (!(box.x + box.w > 0 && box.x < 1280 && box.y + box.h > 35 && box.y < 800 && box.w > 20))
      failures.push("search: the match is not on screen at a readable size " + JSON.stringify(box));
    await page.click("g.node.current", { force: true });
    const info = await page.textContent("#info");
    if (info.indexOf("attributes") < 0 || info.indexOf("inputs") < 0)
      failures.push("click: the panel lacks attributes or inputs: " + info.slice(0, 200));
    await page.screenshot({ path: shot });
    const families = await page.evaluate(() => window.omoptViewer.families().length);
    const folded = await page.evaluate(() => window.omoptViewer.fold(true));
    const hidden = await page.evaluate(() => document.querySelectorAll("g.node.folded").length);
    if (!(folded >= 1 && hidden > nodes / 2))
      failures.push(`collapse: ${folded} boxes, ${hidden} of ${nodes} nodes hidden`);
    if (requests.length) failures.push("the page asked the network for " + requests.join(" "));
    console.log(JSON.stringify({ nodes, count, current: cur, families, folded, hidden, failures }));
  } catch (e) {
    failures.push(String(e));
    console.log(JSON.stringify({ failures }));
  }
  await browser.close();
  process.exit(failures.length ? 1 : 0);
})();

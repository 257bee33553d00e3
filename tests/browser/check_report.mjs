// SPDX-License-Identifier: MIT
// Opens a memfail HTML report in headless Chromium and checks what a reader would see: the page
// loads from the file alone (every other request is refused and counted as a failure), logs no
// error, shows every section with drawn charts, its tokens chart has one labelled line per run, its
// probe browser filters and opens a probe, its screenshot is not blank, and at phone width (375 px)
// no legend is cut off. Prints one line per check; exits 1 on the first failure.
//
// Usage: node check_report.mjs REPORT.html SCREENSHOT.png
// Environment: CHROMIUM (default /usr/bin/chromium).
import { launchQuiet, openReport } from "./open_report.mjs";
import { pathToFileURL } from "node:url";
import { writeFileSync } from "node:fs";

const [reportPath, screenshotPath] = process.argv.slice(2);
if (!reportPath || !screenshotPath) {
  console.error("usage: node check_report.mjs REPORT.html SCREENSHOT.png");
  process.exit(2);
}

const failures = [];
function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures.push(what);
}

const browser = await launchQuiet();
let exitCode = 0;
try {
  // The report must be self-contained: anything but the file itself and inline data is refused.
  const { page, consoleErrors, outsideRequests } = await openReport(browser, reportPath);

  const sections = await page.evaluate(() =>
    [...document.querySelectorAll("section[id]")].map((s) => ({
      id: s.id,
      svgs: s.querySelectorAll("svg").length,
      marks: s.querySelectorAll("svg rect, svg circle, svg path, svg line").length,
      text: s.innerText.trim().length,
    })),
  );
  const byId = Object.fromEntries(sections.map((s) => [s.id, s]));
  console.log(`sections: ${sections.map((s) => `${s.id}(${s.svgs} svg, ${s.marks} marks)`).join(" ")}`);
  for (const id of ["success", "stages", "models", "tokens", "runs", "probes"]) {
    check(byId[id] && byId[id].text > 0, `section #${id} is present and not empty`);
  }
  for (const id of ["success", "stages"]) {
    check(byId[id] && byId[id].svgs > 0 && byId[id].marks > 10, `section #${id} draws a chart`);
  }

  // The probe browser: a list of probes, filters that narrow it, a probe that opens.
  const probeCount = () => page.locator("[data-probe]").count();
  const before = await probeCount();
  check(before > 0, `the probe browser lists probes (${before} on the first page)`);
  const stageFilter = page.locator("select#f-stage");
  check((await stageFilter.count()) === 1, "the probe browser has a stage filter");
  if ((await stageFilter.count()) === 1) {
    const options = await stageFilter.locator("option").evaluateAll((os) => os.map((o) => o.value));
    const notRetrieved = options.find((v) => v === "not_retrieved");
    if (notRetrieved) {
      await stageFilter.selectOption(notRetrieved);
      const stages = await page
        .locator("[data-probe]")
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-stage")));
      check(
        stages.length > 0 && stages.every((s) => s === "not_retrieved"),
        `filtering by stage not_retrieved shows only such probes (${stages.length})`,
      );
      await stageFilter.selectOption("");
    }
  }
  const first = page.locator("[data-probe]").first();
  if ((await first.count()) === 1) {
    await first.click();
    const detail = page.locator("[data-probe-detail]");
    await detail.first().waitFor({ state: "visible", timeout: 5000 }).catch(() => {});
    const text = (await detail.count()) ? await detail.first().innerText() : "";
    check(text.length > 20, `opening a probe shows its details (${text.length} characters)`);
  }

  // The tokens-per-memory chart: one line per run, every point labelled.
  const tokens = await page.evaluate(() => {
    const section = document.querySelector("section#tokens");
    if (!section) return null;
    return {
      series: section.querySelectorAll("svg g.series").length,
      lines: section.querySelectorAll("svg polyline.series-line").length,
      points: section.querySelectorAll("svg g.point").length,
      labels: [...section.querySelectorAll("svg text.point-label")].filter((t) => t.textContent.trim() !== "").length,
      legend: section.querySelectorAll(".legend .legend-entry").length,
    };
  });
  check(
    tokens && tokens.series >= 2 && tokens.series === tokens.legend && tokens.points > 0 && tokens.labels === tokens.points,
    `the tokens chart has one series per run, each in the legend, every point labelled (${JSON.stringify(tokens)})`,
  );

  await page.screenshot({ path: screenshotPath, fullPage: true });
  // Not blank: draw the screenshot on a canvas and count pixels far from the page background.
  const png = (await import("node:fs")).readFileSync(screenshotPath).toString("base64");
  const blank = await browser.newPage();
  const ink = await blank.evaluate(async (data) => {
    const img = new Image();
    img.src = `data:image/png;base64,${data}`;
    await img.decode();
    const canvas = document.createElement("canvas");
    canvas.width = img.width;
    canvas.height = img.height;
    const ctx = canvas.getContext("2d");
    ctx.drawImage(img, 0, 0);
    const pixels = ctx.getImageData(0, 0, img.width, img.height).data;
    const [r0, g0, b0] = [pixels[0], pixels[1], pixels[2]];
    let inked = 0;
    const colours = new Set();
    for (let i = 0; i < pixels.length; i += 4) {
      const d = Math.abs(pixels[i] - r0) + Math.abs(pixels[i + 1] - g0) + Math.abs(pixels[i + 2] - b0);
      if (d > 60) inked++;
      if (i % 64 === 0) colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
    }
    return { width: img.width, height: img.height, fraction: inked / (pixels.length / 4), colours: colours.size };
  }, png);
  console.log(
    `screenshot: ${ink.width}x${ink.height}, ${(100 * ink.fraction).toFixed(1)}% inked, ${ink.colours} colours sampled`,
  );
  check(ink.fraction > 0.02 && ink.colours > 8, "the screenshot is not blank");

  // At phone width (375 px) every legend wraps inside the screen and its figure: no entry is cut off,
  // however wide the chart beside it scrolls.
  const reportUrl = pathToFileURL(reportPath).href;
  const phone = await browser.newPage({ viewport: { width: 375, height: 800 }, deviceScaleFactor: 2, isMobile: true });
  await phone.route("**/*", (route) => {
    const url = route.request().url();
    return url === reportUrl || url.startsWith("data:") ? route.continue() : route.abort();
  });
  await phone.goto(reportUrl, { waitUntil: "load" });
  // Section 2 shows one k at a time: show every view so each legend is measured.
  await phone.evaluate(() => document.querySelectorAll(".k-view").forEach((v) => (v.hidden = false)));
  const legends = await phone.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const out = { width, legends: 0, entries: 0, svgEntries: 0, problems: [] };
    const name = (e) => (e.textContent || "").trim().slice(0, 60);
    for (const legend of document.querySelectorAll(".legend")) {
      out.legends++;
      const box = legend.getBoundingClientRect();
      const figure = legend.closest("figure") || legend.parentElement;
      const frame = figure.getBoundingClientRect();
      if (legend.scrollWidth > legend.clientWidth + 1) out.problems.push(`legend scrolls: ${name(legend)}`);
      if (box.right > frame.right + 0.5 || box.right > width + 0.5) out.problems.push(`legend overflows: ${name(legend)}`);
      for (const entry of legend.querySelectorAll(".legend-entry")) {
        out.entries++;
        const r = entry.getBoundingClientRect();
        if (r.left < frame.left - 0.5 || r.right > frame.right + 0.5 || r.right > width + 0.5)
          out.problems.push(`entry cut off (${Math.round(r.left)}-${Math.round(r.right)} of ${width}): ${name(entry)}`);
      }
    }
    // Legends drawn inside a chart must be inside the part of it the screen shows.
    for (const entry of document.querySelectorAll("svg .legend-entry")) {
      out.svgEntries++;
      const wrap = (entry.closest(".chart-wrap") || entry.closest("svg")).getBoundingClientRect();
      const r = entry.getBoundingClientRect();
      if (r.right > Math.min(wrap.right, width) + 0.5) out.problems.push(`svg legend entry cut off: ${name(entry)}`);
    }
    // Every chart fits the screen whole (scaled down, never cut off behind a scroll box: a stage bar
    // that showed its first 10-25% made a run 59% not_retrieved look 100% so).
    out.charts = 0;
    for (const svg of document.querySelectorAll("svg.chart")) {
      if (svg.closest("[hidden]") || svg.closest("details:not([open])")) continue;
      out.charts++;
      const r = svg.getBoundingClientRect();
      if (r.width === 0) continue;
      if (r.right > width + 0.5) out.problems.push(`chart wider than the screen (${Math.round(r.width)} px): ${name(svg)}`);
      const wrap = svg.closest(".chart-wrap");
      if (wrap && wrap.scrollWidth > wrap.clientWidth + 1) out.problems.push(`chart scrolls in its box: ${name(svg)}`);
    }
    if (document.documentElement.scrollWidth > width + 1)
      out.problems.push(`the page scrolls sideways (${document.documentElement.scrollWidth} px wide)`);
    return out;
  });
  console.log(
    `phone width ${legends.width}px: ${legends.legends} legends, ${legends.entries} entries, ${legends.svgEntries} in svgs, ${legends.charts} charts`,
  );
  check(legends.legends > 0 && legends.entries > 0, "the charts have legends at phone width");
  check(legends.charts > 0, "charts are measured at phone width");
  check(
    legends.problems.length === 0,
    `no legend is cut off at phone width${legends.problems.length ? ": " + legends.problems.slice(0, 8).join(" | ") : ""}`,
  );
  await phone.screenshot({ path: screenshotPath.replace(/\.png$/, "") + "-phone.png", fullPage: false });
  await phone.close();

  check(consoleErrors.length === 0, `no console errors${consoleErrors.length ? ": " + consoleErrors.join(" | ") : ""}`);
  check(
    outsideRequests.length === 0,
    `no request left the file${outsideRequests.length ? ": " + outsideRequests.join(" ") : ""}`,
  );
  writeFileSync(`${screenshotPath}.json`, JSON.stringify({ sections, ink, consoleErrors, outsideRequests }, null, 2));
} catch (err) {
  console.error(`FAIL ${err && err.stack ? err.stack : err}`);
  exitCode = 1;
} finally {
  await browser.close();
}
if (failures.length) exitCode = 1;
process.exit(exitCode);
